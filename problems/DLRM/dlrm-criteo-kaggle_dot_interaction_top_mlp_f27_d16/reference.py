import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['dim'])
    dt = torch.float32
    out['dense_x'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['num_tables'], a['dim'])
    dt = torch.float32
    out['sparse_embeddings'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['top0'], a['top_in'])
    dt = torch.float32
    out['top_w0'] = (torch.randn(shape, device=device) * 0.052199575097188054).to(dt)
    shape = (a['top0'],)
    dt = torch.float32
    out['top_b0'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['top1'], a['top0'])
    dt = torch.float32
    out['top_w1'] = (torch.randn(shape, device=device) * 0.04419417382415922).to(dt)
    shape = (a['top1'],)
    dt = torch.float32
    out['top_b1'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    shape = (a['top2'], a['top1'])
    dt = torch.float32
    out['top_w2'] = (torch.randn(shape, device=device) * 0.0625).to(dt)
    shape = (a['top2'],)
    dt = torch.float32
    out['top_b2'] = (torch.randn(shape, device=device) * 0.1).to(dt)
    return out


@torch.no_grad()
def run(dense_x, sparse_embeddings, top_w0, top_b0, top_w1, top_b1, top_w2, top_b2):
    t = torch.cat([dense_x[:, None, :], sparse_embeddings], dim=1)
    z = torch.bmm(t, t.transpose(1, 2))
    li, lj = torch.tril_indices(t.shape[1], t.shape[1], offset=-1, device=t.device)
    r = torch.cat([dense_x, z[:, li, lj]], dim=1)
    h = F.relu(F.linear(r, top_w0, top_b0))
    h = F.relu(F.linear(h, top_w1, top_b1))
    return torch.sigmoid(F.linear(h, top_w2, top_b2))
