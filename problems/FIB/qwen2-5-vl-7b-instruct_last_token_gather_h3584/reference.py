import torch


@torch.no_grad()
def run(hidden_states, qo_indptr):
    """Keep only each sequence's last token before the LM head (logits are needed for those alone)."""
    return hidden_states[(qo_indptr[1:] - 1).long()]


def _split(total, parts, minimum=1):
    """A random composition of `total` into `parts` sizes, each at least `minimum`."""
    extra = total - parts * minimum
    assert extra >= 0
    cuts = torch.sort(torch.randint(0, extra + 1, (parts - 1,))).values
    bounds = torch.cat([torch.zeros(1, dtype=torch.long), cuts, torch.full((1,), extra, dtype=torch.long)])
    return torch.diff(bounds) + minimum


def _offsets(sizes):
    return torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(sizes, 0)]).to(torch.int32)


def make_inputs(axes, device):
    b, t, h = axes["batch_size"], axes["num_tokens"], axes["hidden_size"]
    return {"hidden_states": torch.randn(t, h).to(torch.bfloat16).to(device),
            "qo_indptr": _offsets(_split(t, b)).to(device)}
