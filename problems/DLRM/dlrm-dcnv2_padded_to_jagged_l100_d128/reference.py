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
    """fbgemm's dense_to_jagged: the first lengths[b] rows of each sample, concatenated in sample order.
    Gathered by (sample, slot) index pairs built from the lengths, so the output's size comes from the
    small lengths tensor, not from a [batch, max_len] mask."""
    total = int(lengths.sum())
    starts = torch.cumsum(lengths, 0) - lengths
    sample = torch.repeat_interleave(torch.arange(lengths.shape[0], device=padded.device), lengths,
                                     output_size=total)
    slot = torch.arange(total, device=padded.device) - starts[sample]
    return padded[sample, slot]
