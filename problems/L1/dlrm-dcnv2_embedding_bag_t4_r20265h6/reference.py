import torch
import torch.nn.functional as F


@torch.no_grad()
def run(indices, weight):
    return F.embedding(indices, weight).sum(dim=1)
