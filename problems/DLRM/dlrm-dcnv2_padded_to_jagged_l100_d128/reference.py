import torch
import torch.nn.functional as F


def _lengths(batch, total, max_len, device):
    """Random lengths in [0, max_len] that sum to total: total distinct slots of the padded batch."""
    slots = torch.randperm(batch * max_len, device=device)[:total]
    return torch.bincount(slots // max_len, minlength=batch).to(torch.int64)


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    batch, total, max_len, dim = a["batch_size"], a["total_values"], a["max_len"], a["embedding_dim"]
    lengths = _lengths(batch, total, max_len, device)
    return {"padded": torch.randn(batch, max_len, dim, device=device), "lengths": lengths}


@torch.no_grad()
def run(padded, lengths):
    """fbgemm's dense_to_jagged: the first lengths[b] rows of each sample, concatenated in sample order."""
    slots = torch.arange(padded.shape[1], device=padded.device)
    mask = slots.unsqueeze(0) < lengths.unsqueeze(1)
    return padded[mask]
