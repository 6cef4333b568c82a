import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['num_k_heads'], a['head_k_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_k_heads'], a['head_k_dim'])
    dt = torch.bfloat16
    out['key'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_v_heads'], a['head_v_dim'])
    dt = torch.bfloat16
    out['value'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_v_heads'])
    dt = torch.float32
    out['g'] = (F.logsigmoid(torch.randn(shape, device=device) + 2.0)).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_v_heads'])
    dt = torch.bfloat16
    out['beta'] = (torch.sigmoid(torch.randn(shape, device=device))).to(dt)
    shape = (a['batch_size'], a['num_v_heads'], a['head_k_dim'], a['head_v_dim'])
    dt = torch.float32
    out['initial_state'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out



def _acc(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def _rmsnorm(x, weight, eps):
    xf = x.to(_acc(x))
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope_tables(seq_len, dim, theta, ref):
    """cos/sin [seq_len, dim] for positions 0..seq_len-1 (Hugging Face layout: halves repeated)."""
    acc = _acc(ref)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    freqs = torch.arange(seq_len, device=ref.device, dtype=acc)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)




def _l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)


@torch.no_grad()
def run(query, key, value, g, beta, initial_state):
    """torch_chunk_gated_delta_rule with use_qk_l2norm_in_kernel=True, chunk 64, from initial_state.

    query/key [b, t, hk, dk], value [b, t, hv, dv], g (log-decay) and beta [b, t, hv]; returns the output
    [b, t, hv, dv] and the final state [b, hv, dk, dv].
    """
    acc = _acc(g)
    chunk = 64
    batch, seq_len, hk, dk = key.shape
    hv, dv = value.shape[-2:]
    q = query.repeat_interleave(hv // hk, dim=2)
    k = key.repeat_interleave(hv // hk, dim=2)
    q, k, v, beta, g = (x.transpose(1, 2).to(acc) for x in (q, k, value, beta, g))
    q = _l2norm(q) * dk ** -0.5
    k = _l2norm(k)
    pad = (chunk - seq_len % chunk) % chunk
    q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
    beta, g = (F.pad(x, (0, pad)) for x in (beta, g))
    c = (seq_len + pad) // chunk
    k_beta = k * beta[..., None]
    v_beta = v * beta[..., None]
    q, k, k_beta, v_beta = (x.reshape(batch, hv, c, chunk, x.shape[-1]) for x in (q, k, k_beta, v_beta))
    cum = g.reshape(batch, hv, c, chunk).cumsum(dim=-1)
    upper = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).triu(1)
    decay = (cum[..., :, None] - cum[..., None, :]).masked_fill(upper, float("-inf")).exp()
    # (I + strictly_lower(k_beta k^T * decay)) T = I, solved by forward substitution.
    lower = -((k_beta @ k.transpose(-1, -2)) * decay).tril(-1)
    T = lower.clone()
    for i in range(1, chunk):
        row = T[..., i, :i].clone()
        T[..., i, :i] = row + (row[..., :, None] * T[..., :i, :i]).sum(-2)
    T = T + torch.eye(chunk, dtype=acc, device=q.device)
    new_values = T @ v_beta
    k_cumdecay = T @ (k_beta * cum.exp()[..., None])
    attn = (q @ k.transpose(-1, -2)) * decay
    q = q * cum.exp()[..., None]
    k = k * (cum[..., -1:] - cum).exp()[..., None]
    state = initial_state.to(acc)
    out = torch.zeros_like(new_values)
    for i in range(c):
        v_new = new_values[:, :, i] - k_cumdecay[:, :, i] @ state
        out[:, :, i] = q[:, :, i] @ state + attn[:, :, i] @ v_new
        state = state * cum[:, :, i, -1].exp()[..., None, None] + k[:, :, i].transpose(-1, -2) @ v_new
    out = out.reshape(batch, hv, -1, dv)[:, :, :seq_len].transpose(1, 2)
    return out.to(value.dtype), state
