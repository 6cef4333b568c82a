import torch
import torch.nn.functional as F


@torch.no_grad()
def run(x, weight):
    return F.conv1d(x, weight, stride=5, padding=0, groups=1)
