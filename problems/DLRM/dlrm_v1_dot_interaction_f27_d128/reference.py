import torch
import torch.nn.functional as F


def _interact(dense, sparse):
    features = torch.cat((dense.unsqueeze(1), sparse), dim=1)
    products = torch.bmm(features, features.transpose(1, 2))
    count = features.shape[1]
    rows, columns = torch.tril_indices(count, count, offset=-1, device=dense.device)
    return torch.cat((dense, products[:, rows, columns]), dim=1)


def make_inputs(axes_and_scalars, device):
    """dense is the bottom MLP's ReLU output, sparse the pooled embeddings."""
    a = axes_and_scalars
    out = {"dense": torch.relu(torch.randn(a["batch_size"], a["dim"], device=device)),
           "sparse": torch.randn(a["batch_size"], a["num_sparse"], a["dim"], device=device) * 0.3}
    return out


@torch.no_grad()
def run(dense, sparse):
    return _interact(dense, sparse)
