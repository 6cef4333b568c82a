import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['decoder_len'], a['d_model'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['encoder_len'], a['d_model'])
    dt = torch.bfloat16
    out['encoder_hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['ln_weight'] = (torch.randn(shape, device=device) * 0.5 + 1.0).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['ln_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['d_model'], a['d_model'])
    dt = torch.bfloat16
    out['q_proj'] = (torch.randn(shape, device=device) * 0.07216878364870322).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['q_bias'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['d_model'], a['d_model'])
    dt = torch.bfloat16
    out['k_proj'] = (torch.randn(shape, device=device) * 0.07216878364870322).to(dt)
    shape = (a['d_model'], a['d_model'])
    dt = torch.bfloat16
    out['v_proj'] = (torch.randn(shape, device=device) * 0.03608439182435161).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['v_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['d_model'], a['d_model'])
    dt = torch.bfloat16
    out['out_proj'] = (torch.randn(shape, device=device) * 0.14433756729740643).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, encoder_hidden_states, ln_weight, ln_bias, q_proj, q_bias, k_proj, v_proj, v_bias,
        out_proj, out_bias):
    b, t, d = hidden_states.shape
    heads = 12
    x = F.layer_norm(hidden_states, (d,), ln_weight, ln_bias, 1e-05)
    q = F.linear(x, q_proj, q_bias).view(b, t, heads, -1).transpose(1, 2)
    k = F.linear(encoder_hidden_states, k_proj).view(b, -1, heads, d // heads).transpose(1, 2)
    v = F.linear(encoder_hidden_states, v_proj, v_bias).view(b, -1, heads, d // heads).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v)
    return hidden_states + F.linear(o.transpose(1, 2).reshape(b, t, d), out_proj, out_bias)
