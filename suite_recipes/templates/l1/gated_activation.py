import torch
import torch.nn.functional as F


@torch.no_grad()
def run(gate, up):
    return __ACTIVATION__ * up
