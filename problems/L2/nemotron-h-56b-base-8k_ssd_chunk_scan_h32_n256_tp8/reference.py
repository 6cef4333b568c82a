import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['num_heads'], a['head_dim'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_heads'])
    dt = torch.bfloat16
    out['dt'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['A_log'] = (torch.log(torch.rand(shape, device=device) * 15 + 1)).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_groups'], a['state_size'])
    dt = torch.bfloat16
    out['B'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'], a['num_groups'], a['state_size'])
    dt = torch.bfloat16
    out['C'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['D'] = (torch.rand(shape, device=device) + 0.5).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['dt_bias'] = ((lambda d: d + torch.log(-torch.expm1(-d)))(torch.exp(torch.rand(shape, device=device) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)))).to(dt)
    shape = (a['batch_size'], a['num_heads'], a['head_dim'], a['state_size'])
    dt = torch.float32
    out['initial_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
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


@torch.no_grad()
def run(x, dt, A_log, B, C, D, dt_bias, initial_states):
    """transformers mamba2_chunk_scan with dt_softplus=True, D and initial states (seq_len a multiple of the chunk)."""
    acc = _acc(dt)
    batch, seq_len, heads, head_dim = x.shape
    groups, chunk = B.shape[2], 128
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))  # [b, t, h]
    A = -torch.exp(A_log.to(acc))
    xf = x.to(acc)
    Bh = B.to(acc).repeat_interleave(heads // groups, dim=2)
    Ch = C.to(acc).repeat_interleave(heads // groups, dim=2)
    xs = xf * dt[..., None]
    dA = (A * dt)  # [b, t, h]
    c = seq_len // chunk
    xs, Bh, Ch = (t.reshape(batch, c, chunk, heads, -1) for t in (xs, Bh, Ch))
    dA = dA.reshape(batch, c, chunk, heads).permute(0, 3, 1, 2)  # [b, h, c, l]
    acs = torch.cumsum(dA, dim=-1)
    lower = torch.tril(torch.ones(chunk, chunk, dtype=torch.bool, device=x.device))
    L = torch.exp((acs[..., :, None] - acs[..., None, :]).masked_fill(~lower, -torch.inf))
    scores = torch.einsum("bclhn,bcshn->bhcls", Ch, Bh) * L
    y_diag = torch.einsum("bhcls,bcshp->bclhp", scores, xs)
    decay_states = torch.exp(acs[..., -1:] - acs)  # [b, h, c, l]
    Bd = Bh * decay_states.permute(0, 2, 3, 1)[..., None]
    states = torch.einsum("bclhn,bclhp->bchpn", Bd, xs)
    s = initial_states.to(acc)
    entering = []
    for i in range(c):
        entering.append(s)
        s = torch.exp(acs[:, :, i, -1])[:, :, None, None] * s + states[:, i]
    entering = torch.stack(entering, dim=1)
    y_off = torch.einsum("bclhn,bchpn->bclhp", Ch, entering) * torch.exp(acs).permute(0, 2, 3, 1)[..., None]
    y = (y_diag + y_off).reshape(batch, seq_len, heads, head_dim) + xf * D.to(acc)[:, None]
    return y.to(x.dtype), s
