import torch
import torch.nn.functional as F


@torch.no_grad()
def run(x, weight, bias):
    return F.conv2d(x, weight, bias, stride=1, padding=3, groups=x.shape[1])
