import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['seq_len'], a['hidden_size'])
    dt = torch.bfloat16
    out['hidden_states'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    shape = (a['batch_size'], a['seq_len'])
    dt = torch.bool
    out['visual_pos_masks'] = (torch.zeros(shape, dtype=torch.bool, device=device).index_fill_(1, torch.arange(16, 16 + a['image_tokens'], device=device), True)).to(dt)
    shape = (a['num_visual'], a['hidden_size'])
    dt = torch.bfloat16
    out['visual_embeds'] = (torch.randn(shape, device=device) * 1.0).to(dt)
    return out


@torch.no_grad()
def run(hidden_states, visual_pos_masks, visual_embeds):
    # hidden_states[visual_pos_masks, :] += visual_embeds, with the k-th masked position taking row k
    b, s, d = hidden_states.shape
    mask = visual_pos_masks.reshape(b * s)
    rows = (torch.cumsum(mask.long(), 0) - 1).clamp(min=0)
    added = torch.where(mask[:, None], visual_embeds.to(hidden_states.dtype)[rows], 0)
    return hidden_states + added.view(b, s, d)
