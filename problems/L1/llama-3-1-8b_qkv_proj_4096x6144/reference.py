import torch
import torch.nn.functional as F


@torch.no_grad()
def run(x, weight):
    return F.linear(x, weight)
