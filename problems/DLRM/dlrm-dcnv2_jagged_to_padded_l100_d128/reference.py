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
    return {"values": torch.randn(total, dim, device=device), "lengths": lengths}


@torch.no_grad()
def run(values, lengths):
    """fbgemm's jagged_to_padded_dense with padding_value 0: sample b's rows fill out[b, :lengths[b]]."""
    slots = torch.arange(100, device=values.device)
    mask = slots.unsqueeze(0) < lengths.unsqueeze(1)
    out = values.new_zeros(lengths.shape[0], 100, values.shape[1])
    out[mask] = values
    return out
