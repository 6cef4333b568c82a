import math

import torch
import torch.nn.functional as F


__MAKE_INPUTS__


def run(query, key, value, grad_output):
    with torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (query, key, value))
        group = q.shape[1] // k.shape[1]
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1),
                                           is_causal=True)
        return torch.autograd.grad(o, (q, k, v), grad_output)
