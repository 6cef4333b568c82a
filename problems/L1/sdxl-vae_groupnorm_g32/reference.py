import torch
import torch.nn.functional as F


@torch.no_grad()
def run(hidden_states, weight, bias, eps):
    return F.group_norm(hidden_states, 32, weight, bias, eps)
