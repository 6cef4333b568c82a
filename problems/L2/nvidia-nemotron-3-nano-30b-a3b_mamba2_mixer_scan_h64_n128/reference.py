import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['proj_size'])
    dt = torch.bfloat16
    out['projected_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['conv_dim'], a['kernel_size'])
    dt = torch.bfloat16
    out['conv_weight'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['conv_dim'],)
    dt = torch.bfloat16
    out['conv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['dt_bias'] = ((lambda d: d + torch.log(-torch.expm1(-d)))(torch.exp(torch.rand(shape, device=device) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)))).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['A_log'] = (torch.log(torch.rand(shape, device=device) * 15 + 1)).to(dt)
    shape = (a['num_heads'],)
    dt = torch.float32
    out['D'] = (torch.rand(shape, device=device) + 0.5).to(dt)
    shape = (a['d_inner'],)
    dt = torch.bfloat16
    out['norm_weight'] = (torch.rand(shape, device=device) + 0.5).to(dt)
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
def run(projected_states, conv_weight, conv_bias, dt_bias, A_log, D, norm_weight):
    """NemotronHMamba2Mixer from the in_proj output to the gated norm (the torch path of
    mamba2_split_conv1d_scan_combined, out_proj excluded): split z | xBC | dt, causal conv1d + SiLU on xBC,
    split x | B | C, the SSD chunk scan (dt softplus, D, zero initial state), then y * silu(z) RMS-normalised
    over groups of d_inner / n_groups, times norm_weight."""
    acc = _acc(dt_bias)
    heads, head_dim, groups, state, chunk = 64, 64, 8, 128, 128
    d_inner = heads * head_dim
    batch, seq_len, _ = projected_states.shape
    z, xBC, dt = projected_states.split([d_inner, d_inner + 2 * groups * state, heads], dim=-1)
    xBC = F.conv1d(xBC.transpose(1, 2).to(acc), conv_weight.to(acc)[:, None, :], conv_bias.to(acc),
                   padding=conv_weight.shape[-1] - 1, groups=xBC.shape[-1])[..., :seq_len]
    xBC = F.silu(xBC).to(projected_states.dtype).transpose(1, 2)
    x, B, C = xBC.split([d_inner, groups * state, groups * state], dim=-1)
    x = x.reshape(batch, seq_len, heads, head_dim).to(acc)
    Bh = B.reshape(batch, seq_len, groups, state).to(acc).repeat_interleave(heads // groups, dim=2)
    Ch = C.reshape(batch, seq_len, groups, state).to(acc).repeat_interleave(heads // groups, dim=2)
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))
    dA = -torch.exp(A_log.to(acc)) * dt
    xs = x * dt[..., None]
    c = seq_len // chunk
    xs, Bh, Ch = (t.reshape(batch, c, chunk, heads, -1) for t in (xs, Bh, Ch))
    acs = torch.cumsum(dA.reshape(batch, c, chunk, heads).permute(0, 3, 1, 2), dim=-1)  # [b, h, c, l]
    lower = torch.tril(torch.ones(chunk, chunk, dtype=torch.bool, device=x.device))
    L = torch.exp((acs[..., :, None] - acs[..., None, :]).masked_fill(~lower, -torch.inf))
    y = torch.einsum("bhcls,bcshp->bclhp", torch.einsum("bclhn,bcshn->bhcls", Ch, Bh) * L, xs)
    Bd = Bh * torch.exp(acs[..., -1:] - acs).permute(0, 2, 3, 1)[..., None]
    states = torch.einsum("bclhn,bclhp->bchpn", Bd, xs)
    s = torch.zeros_like(states[:, 0])
    entering = []
    for i in range(c):
        entering.append(s)
        s = torch.exp(acs[:, :, i, -1])[:, :, None, None] * s + states[:, i]
    y = y + torch.einsum("bclhn,bchpn->bclhp", Ch, torch.stack(entering, dim=1)) \
        * torch.exp(acs).permute(0, 2, 3, 1)[..., None]
    y = y.reshape(batch, seq_len, heads, head_dim) + x * D.to(acc)[:, None]
    g = y.reshape(batch, seq_len, d_inner) * F.silu(z.to(acc))  # the scan output stays fp32 into the norm
    gg = g.reshape(batch, seq_len, groups, -1)
    gg = gg * torch.rsqrt(gg.pow(2).mean(-1, keepdim=True) + 1e-05)
    return (norm_weight.to(acc) * gg.reshape(batch, seq_len, d_inner)).to(projected_states.dtype)
