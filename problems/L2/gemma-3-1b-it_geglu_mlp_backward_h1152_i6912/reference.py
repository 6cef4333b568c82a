import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['gate_proj'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['intermediate_size'], a['hidden_size'])
    dt = torch.bfloat16
    out['up_proj'] = (torch.randn(shape, device=device) * 0.02946278254943948).to(dt)
    shape = (a['hidden_size'], a['intermediate_size'])
    dt = torch.bfloat16
    out['down_proj'] = (torch.randn(shape, device=device) * 0.012028130608117204).to(dt)
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['grad_output'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    return out


def run(hidden_states, gate_proj, up_proj, down_proj, grad_output):
    with torch.enable_grad():
        x = hidden_states.detach().requires_grad_()
        wg = gate_proj.detach().requires_grad_()
        wu = up_proj.detach().requires_grad_()
        wd = down_proj.detach().requires_grad_()
        gate = F.linear(x, wg)
        out = F.linear(F.gelu(gate, approximate='tanh') * F.linear(x, wu), wd)
        return torch.autograd.grad(out, (x, wg, wu, wd), grad_output)
