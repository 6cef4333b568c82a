import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    """The optimizer state of a table that has trained a while: positive, of the order of a squared gradient."""
    a = axes_and_scalars
    rows, dim = a["num_embeddings"], a["embedding_dim"]
    return {"indices": torch.randint(0, rows, (a["batch_size"], a["hotness"]), device=device),
            "grad_pooled": torch.randn(a["batch_size"], dim, device=device),
            "weight": torch.randn(rows, dim, device=device) * 0.1,
            "momentum": torch.rand(rows, device=device) + 0.5}


@torch.no_grad()
def run(indices, grad_pooled, weight, momentum, learning_rate, eps):
    """EXACT_ROWWISE_ADAGRAD: the gradient of each touched row is summed over all its occurrences first
    (duplicates within and across samples), then one update per row:
    state += mean(g^2); w -= lr * g / (sqrt(state) + eps). Untouched rows (g = 0) keep both.
    Returns the written rows only: for each lookup, its row and state after the update (a row looked up
    twice appears twice, with the same values), not the whole table."""
    batch, hot = indices.shape
    dim = grad_pooled.shape[1]
    ids = indices.reshape(-1)
    grads = grad_pooled.unsqueeze(1).expand(-1, hot, -1).reshape(-1, dim)
    grad_rows = torch.zeros_like(weight).index_add_(0, ids, grads)[ids]   # each lookup's row gradient, summed
    new_state = momentum[ids] + grad_rows.pow(2).mean(dim=1)
    new_rows = weight[ids] - learning_rate * grad_rows / (new_state.sqrt() + eps).unsqueeze(1)
    return new_rows.reshape(batch, hot, dim), new_state.reshape(batch, hot)
