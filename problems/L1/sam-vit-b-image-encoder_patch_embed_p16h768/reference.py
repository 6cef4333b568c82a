import torch
import torch.nn.functional as F


@torch.no_grad()
def run(x, weight, bias):
    return F.conv2d(x, weight, bias, stride=16, padding=0, groups=1)
