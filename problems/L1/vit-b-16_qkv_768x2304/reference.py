import torch
import torch.nn.functional as F


@torch.no_grad()
def run(x, weight, bias):
    return F.linear(x, weight, bias)
