import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    weight = torch.randn(a["num_embeddings"], a["embedding_dim"], device=device) * 0.1
    indices = torch.randint(0, a["num_embeddings"], (a["batch_size"], a["hotness"]), device=device)
    return {"indices": indices, "weight": weight}


@torch.no_grad()
def run(indices, weight):
    """F.embedding_bag(indices, weight, mode="sum"), written as a gather and a sum over the bag."""
    return F.embedding(indices, weight).sum(dim=1)
