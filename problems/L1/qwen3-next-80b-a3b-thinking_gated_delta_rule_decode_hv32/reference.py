import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_k_heads'], a['head_k_dim'])
    dt = torch.bfloat16
    out['query'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_k_heads'], a['head_k_dim'])
    dt = torch.bfloat16
    out['key'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_v_heads'], a['head_v_dim'])
    dt = torch.bfloat16
    out['value'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_v_heads'])
    dt = torch.float32
    out['g'] = (F.logsigmoid(torch.randn(shape, device=device) + 2.0)).to(dt)
    shape = (a['batch_size'], a['num_v_heads'])
    dt = torch.bfloat16
    out['beta'] = (torch.sigmoid(torch.randn(shape, device=device))).to(dt)
    shape = (a['batch_size'], a['num_v_heads'], a['head_k_dim'], a['head_v_dim'])
    dt = torch.float32
    out['state'] = (torch.randn(shape, device=device) * 0.1).to(dt)
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
def run(query, key, value, g, beta, state):
    """torch_recurrent_gated_delta_rule for one decode token (use_qk_l2norm_in_kernel=True)."""
    acc = _acc(state)
    hk, dk = key.shape[-2:]
    hv = value.shape[-2]
    q = _l2norm(query.repeat_interleave(hv // hk, dim=1).to(acc)) * dk ** -0.5  # [b, hv, dk]
    k = _l2norm(key.repeat_interleave(hv // hk, dim=1).to(acc))
    s = state.to(acc) * g.to(acc).exp()[..., None, None]
    kv_mem = (s * k[..., None]).sum(-2)
    delta = (value.to(acc) - kv_mem) * beta.to(acc)[..., None]
    s = s + k[..., None] * delta[..., None, :]
    out = (s * q[..., None]).sum(-2)
    return out.to(value.dtype), s.to(state.dtype)
