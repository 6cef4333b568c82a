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
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['three_hidden'], a['hidden_size'])
    dt = torch.bfloat16
    out['qkv_weight'] = (torch.randn(shape, device=device) * 0.05103103630798288).to(dt)
    shape = (a['three_hidden'],)
    dt = torch.bfloat16
    out['qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['proj_weight'] = (torch.randn(shape, device=device) * 0.05103103630798288).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ls_gamma'] = (torch.randn(shape, device=device) * 0.3 + 1.0).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, norm_weight, norm_bias, qkv_weight, qkv_bias, proj_weight, proj_bias, ls_gamma):
    b, n, d = hidden_states.shape
    heads = 6
    h = F.layer_norm(hidden_states, (d,), norm_weight, norm_bias, 1e-06)
    q, k, v = F.linear(h, qkv_weight, qkv_bias).view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4).unbind(0)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)
    return hidden_states + ls_gamma * F.linear(o, proj_weight, proj_bias)
