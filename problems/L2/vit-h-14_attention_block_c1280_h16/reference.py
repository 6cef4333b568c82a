import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ln_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ln_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['three_hidden'], a['hidden_size'])
    dt = torch.bfloat16
    out['qkv_weight'] = (torch.randn(shape, device=device) * 0.05590169943749474).to(dt)
    shape = (a['three_hidden'],)
    dt = torch.bfloat16
    out['qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['out_weight'] = (torch.randn(shape, device=device) * 0.02795084971874737).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['out_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, ln_weight, ln_bias, qkv_weight, qkv_bias, out_weight, out_bias):
    b, n, d = hidden_states.shape
    heads = 16
    h = F.layer_norm(hidden_states, (d,), ln_weight, ln_bias, 1e-06)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
    return hidden_states + F.linear(o, out_weight, out_bias)
