import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['max_num_tiles'], a['tile_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_state'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'],)
    dt = torch.int64
    out['aspect_ratio_ids'] = (torch.randint(1, 9, shape, device=device)).to(dt)
    shape = (a['tile_tokens'], a['hidden_size'])
    dt = torch.bfloat16
    out['embedding'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['num_ratios'], a['tile_dim'])
    dt = torch.bfloat16
    out['tile_embedding_weight'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    shape = (a['one'],)
    dt = torch.bfloat16
    out['gate'] = (torch.randn(shape, device=device) * 0.5).to(dt)
    return out


@torch.no_grad()
def run(hidden_state, aspect_ratio_ids, embedding, tile_embedding_weight, gate):
    b, tiles, patches, d = hidden_state.shape
    g = gate.tanh()
    x = hidden_state + ((1 - g) * embedding).view(1, 1, patches, d)
    tile = F.embedding(aspect_ratio_ids, tile_embedding_weight).reshape(b, tiles, patches, d)
    return x + g * tile
