import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['text_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['encoder_hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['time_embed_dim'])
    dt = torch.bfloat16
    out['temb'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['six_hidden'], a['time_embed_dim'])
    dt = torch.bfloat16
    out['linear_weight'] = (torch.randn(shape, device=device) * 0.04419417382415922).to(dt)
    shape = (a['six_hidden'],)
    dt = torch.bfloat16
    out['linear_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['batch_size'], a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['grad_norm_hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['text_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['grad_norm_encoder_hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['two'], a['hidden_size'])
    dt = torch.bfloat16
    out['grad_gates'] = (torch.randn(shape, device=device) * 1.0).to(dt)
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




def _layer_norm(x, weight, bias, eps):
    """LayerNorm in the working precision (fp32, or fp64 in the golden run), back to x's dtype."""
    xf = x.to(_acc(x))
    out = F.layer_norm(xf, (x.shape[-1],), None if weight is None else weight.to(xf.dtype),
                       None if bias is None else bias.to(xf.dtype), eps)
    return out.to(x.dtype)


def _rope_pairs(x, cos, sin):
    """Rotate interleaved pairs (x0, x1) of the last dim by angles with cos/sin [..., d/2] (fp32 math)."""
    acc = _acc(x)
    xf = x.to(acc).unflatten(-1, (-1, 2))
    x0, x1 = xf[..., 0], xf[..., 1]
    cos, sin = cos.to(acc), sin.to(acc)
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2).to(x.dtype)


def _sdpa(q, k, v):
    """Bidirectional attention over [b, heads, len, head_dim]."""
    return F.scaled_dot_product_attention(q, k, v)


def run(hidden_states, encoder_hidden_states, temb, linear_weight, linear_bias, norm_weight, norm_bias,
        grad_norm_hidden_states, grad_norm_encoder_hidden_states, grad_gates):
    """Backward of CogVideoXLayerNormZero (fp32 inside, as autocast keeps LayerNorm): gradients of every input."""
    acc = _acc(hidden_states)
    with torch.enable_grad():
        params = [z.detach().to(acc).requires_grad_() for z in (hidden_states, encoder_hidden_states, temb,
                                                                 linear_weight, linear_bias, norm_weight, norm_bias)]
        x, c, t, w, bias, nw, nb = params
        shift, scale, gate, enc_shift, enc_scale, enc_gate = F.linear(F.silu(t), w, bias).chunk(6, dim=1)
        h = F.layer_norm(x, (x.shape[-1],), nw, nb, 1e-05) * (1 + scale[:, None]) + shift[:, None]
        e = F.layer_norm(c, (c.shape[-1],), nw, nb, 1e-05) * (1 + enc_scale[:, None]) + enc_shift[:, None]
        grads = torch.autograd.grad((h, e, torch.stack((gate, enc_gate), dim=1)), params,
                                    (grad_norm_hidden_states.to(acc), grad_norm_encoder_hidden_states.to(acc),
                                     grad_gates.to(acc)))
    return tuple(g.to(hidden_states.dtype) for g in grads)
