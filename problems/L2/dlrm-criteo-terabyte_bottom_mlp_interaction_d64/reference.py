import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['num_dense_features'])
    dt = torch.float32
    out['dense_features'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_sparse_features'], a['embedding_dim'])
    dt = torch.float32
    out['sparse_embeddings'] = (torch.randn(shape, device=device) * 0.3).to(dt)
    shape = (a['bot_1'], a['num_dense_features'])
    dt = torch.float32
    out['bot_w0'] = (torch.randn(shape, device=device) * 0.3922322702763681).to(dt)
    shape = (a['bot_1'],)
    dt = torch.float32
    out['bot_b0'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['bot_2'], a['bot_1'])
    dt = torch.float32
    out['bot_w1'] = (torch.randn(shape, device=device) * 0.0625).to(dt)
    shape = (a['bot_2'],)
    dt = torch.float32
    out['bot_b1'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['embedding_dim'], a['bot_2'])
    dt = torch.float32
    out['bot_w2'] = (torch.randn(shape, device=device) * 0.08838834764831845).to(dt)
    shape = (a['embedding_dim'],)
    dt = torch.float32
    out['bot_b2'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


def _interact(dense, sparse):
    features = torch.cat((dense.unsqueeze(1), sparse), dim=1)
    products = torch.bmm(features, features.transpose(1, 2))
    count = features.shape[1]
    rows, columns = torch.tril_indices(count, count, offset=-1, device=dense.device)
    return torch.cat((dense, products[:, rows, columns]), dim=1)


@torch.no_grad()
def run(dense_features, sparse_embeddings, bot_w0, bot_b0, bot_w1, bot_b1, bot_w2, bot_b2):
    x = torch.relu(F.linear(dense_features, bot_w0, bot_b0))
    x = torch.relu(F.linear(x, bot_w1, bot_b1))
    x = torch.relu(F.linear(x, bot_w2, bot_b2))
    return _interact(x, sparse_embeddings)
