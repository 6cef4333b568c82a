import torch


@torch.no_grad()
def run(logits):
    return torch.log_softmax(logits, dim=-1)
