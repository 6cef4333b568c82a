import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_patches'], a['hidden_size'])
    dt = torch.bfloat16
    out['x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['caption_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['y'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['six_hidden'])
    dt = torch.bfloat16
    out['t'] = (torch.randn(shape, device=device) * 0.3).to(dt)
    shape = (a['six'], a['hidden_size'])
    dt = torch.bfloat16
    out['scale_shift_table'] = (torch.randn(shape, device=device) * 0.3).to(dt)
    shape = (a['three_hidden'], a['hidden_size'])
    dt = torch.bfloat16
    out['qkv_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['three_hidden'],)
    dt = torch.bfloat16
    out['qkv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['proj_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['cross_q_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['cross_q_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['two_hidden'], a['hidden_size'])
    dt = torch.bfloat16
    out['cross_kv_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['two_hidden'],)
    dt = torch.bfloat16
    out['cross_kv_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['cross_proj_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['cross_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['mlp_hidden'], a['hidden_size'])
    dt = torch.bfloat16
    out['fc1_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['mlp_hidden'],)
    dt = torch.bfloat16
    out['fc1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['mlp_hidden'])
    dt = torch.bfloat16
    out['fc2_weight'] = (torch.randn(shape, device=device) * 0.01473139127471974).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['fc2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


def _modulate(x, shift, scale):
    return F.layer_norm(x, (x.shape[-1],), eps=1e-06) * (1 + scale) + shift


def _attention(q, k, v, heads):
    b, n, d = q.shape
    q, k, v = (t.reshape(b, -1, heads, d // heads).transpose(1, 2) for t in (q, k, v))
    return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d)


@torch.no_grad()
def run(x, y, t, scale_shift_table, qkv_weight, qkv_bias, proj_weight, proj_bias, cross_q_weight, cross_q_bias,
        cross_kv_weight, cross_kv_bias, cross_proj_weight, cross_proj_bias, fc1_weight, fc1_bias, fc2_weight,
        fc2_bias):
    b, n, d = x.shape
    heads = 16
    shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = \
        (scale_shift_table[None] + t.reshape(b, 6, d)).chunk(6, dim=1)
    q, k, v = F.linear(_modulate(x, shift_msa, scale_msa), qkv_weight, qkv_bias).chunk(3, dim=-1)
    x = x + gate_msa * F.linear(_attention(q, k, v, heads), proj_weight, proj_bias)
    q = F.linear(x, cross_q_weight, cross_q_bias)
    k, v = F.linear(y, cross_kv_weight, cross_kv_bias).chunk(2, dim=-1)
    x = x + F.linear(_attention(q, k, v, heads), cross_proj_weight, cross_proj_bias)
    h = F.gelu(F.linear(_modulate(x, shift_mlp, scale_mlp), fc1_weight, fc1_bias), approximate="tanh")
    return x + gate_mlp * F.linear(h, fc2_weight, fc2_bias)
