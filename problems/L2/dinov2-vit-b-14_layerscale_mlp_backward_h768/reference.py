import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm_weight'] = (torch.randn(shape, device=device) * 0.1 + 1.0).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['norm_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['mlp_hidden'], a['hidden_size'])
    dt = torch.bfloat16
    out['fc1_weight'] = (torch.randn(shape, device=device) * 0.03608439182435161).to(dt)
    shape = (a['mlp_hidden'],)
    dt = torch.bfloat16
    out['fc1_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'], a['mlp_hidden'])
    dt = torch.bfloat16
    out['fc2_weight'] = (torch.randn(shape, device=device) * 0.018042195912175804).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['fc2_bias'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['hidden_size'],)
    dt = torch.bfloat16
    out['ls_gamma'] = (torch.randn(shape, device=device) * 0.3 + 1.0).to(dt)
    shape = (a['num_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['grad_output'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    return out


def run(hidden_states, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, ls_gamma,
        grad_output):
    # Parameter gradients sum over every token: accumulate in fp32 (as mixed-precision training does);
    # a bf16 sum's result depends on the summation order, i.e. on the thread count.
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    originals = (hidden_states, norm_weight, norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, ls_gamma)
    with torch.enable_grad():
        params = [t.detach().to(compute).requires_grad_() for t in originals]
        x, nw, nb, w1, b1, w2, b2, gamma = params
        h = F.layer_norm(x, (x.shape[-1],), nw, nb, 1e-06)
        out = x + gamma * F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)
        grads = torch.autograd.grad(out, params, grad_output.to(compute))
    return tuple(g.to(t.dtype) for g, t in zip(grads, originals))
