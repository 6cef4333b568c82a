import torch


@torch.no_grad()
def run(logits):
    return torch.softmax(logits, dim=-1)
