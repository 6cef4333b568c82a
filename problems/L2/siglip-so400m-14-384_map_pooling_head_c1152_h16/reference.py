import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_state'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['probe'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['three_hidden'], a['hidden_size'])
    dt = torch.bfloat16
    out['in_proj_weight'] = (torch.randn(shape, device=device) * 0.05892556509887896).to(dt)
    shape = (a['three_hidden'],)
    dt = torch.bfloat16
    out['in_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['out_proj_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['out_proj_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ln_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ln_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['fc1_weight'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['intermediate_size'],)
    dt = torch.bfloat16
    out['fc1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['intermediate_size'])
    dt = torch.bfloat16
    out['fc2_weight'] = (torch.randn(shape, device=device) * 0.01524276902124231).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['fc2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_state, probe, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, ln_weight, ln_bias,
        fc1_weight, fc1_bias, fc2_weight, fc2_bias):
    b, n, d = hidden_state.shape
    heads = 16
    wq, wk, wv = in_proj_weight.chunk(3)
    bq, bk, bv = in_proj_bias.chunk(3)
    q = F.linear(probe.view(1, 1, d).expand(b, 1, d), wq, bq).view(b, 1, heads, -1).transpose(1, 2)
    k = F.linear(hidden_state, wk, bk).view(b, n, heads, -1).transpose(1, 2)
    v = F.linear(hidden_state, wv, bv).view(b, n, heads, -1).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, 1, d)
    x = F.linear(o, out_proj_weight, out_proj_bias)
    h = F.layer_norm(x, (d,), ln_weight, ln_bias, 1e-06)
    x = x + F.linear(F.gelu(F.linear(h, fc1_weight, fc1_bias), approximate="tanh"), fc2_weight, fc2_bias)
    return x[:, 0]
