import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_frames'], a['d_model'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['ln_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['ln_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['d_model'], a['d_model'])
    dt = torch.bfloat16
    out['q_proj'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['q_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['d_model'], a['d_model'])
    dt = torch.bfloat16
    out['k_proj'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['d_model'], a['d_model'])
    dt = torch.bfloat16
    out['v_proj'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['v_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['d_model'], a['d_model'])
    dt = torch.bfloat16
    out['out_proj'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['d_model'],)
    dt = torch.bfloat16
    out['out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, ln_weight, ln_bias, q_proj, q_bias, k_proj, v_proj, v_bias, out_proj, out_bias):
    b, t, d = hidden_states.shape
    heads = 16
    x = F.layer_norm(hidden_states, (d,), ln_weight, ln_bias, 1e-05)
    q = F.linear(x, q_proj, q_bias).view(b, t, heads, -1).transpose(1, 2)
    k = F.linear(x, k_proj).view(b, t, heads, -1).transpose(1, 2)
    v = F.linear(x, v_proj, v_bias).view(b, t, heads, -1).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
    return hidden_states + F.linear(o, out_proj, out_bias)
