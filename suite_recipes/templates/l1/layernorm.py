import torch
import torch.nn.functional as F


@torch.no_grad()
def run(hidden_states, weight, bias, eps):
    return F.layer_norm(hidden_states, (hidden_states.shape[-1],), weight, bias, eps)
