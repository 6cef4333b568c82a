import torch


@torch.no_grad()
def run(dt_a):
    return torch.cumsum(dt_a, dim=-1)
