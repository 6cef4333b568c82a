import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_tokens'], a['dim'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['dim'])
    dt = torch.bfloat16
    out['temb'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['mod_dim'], a['dim'])
    dt = torch.bfloat16
    out['linear_weight'] = (torch.randn(shape, device=device) * 0.02551551815399144).to(dt)
    shape = (a['mod_dim'],)
    dt = torch.bfloat16
    out['linear_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, temb, linear_weight, linear_bias):
    emb = F.linear(F.silu(temb), linear_weight, linear_bias)
    shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = emb.chunk(6, dim=1)
    normed = F.layer_norm(hidden_states, (hidden_states.shape[-1],), eps=1e-06)
    normed = normed * (1 + scale_msa[:, None]) + shift_msa[:, None]
    return normed, torch.stack((gate_msa, shift_mlp, scale_mlp, gate_mlp), dim=1)
