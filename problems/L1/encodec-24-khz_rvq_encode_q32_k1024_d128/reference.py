import math

import torch
import torch.nn.functional as F


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    out = {}
    shape = (a['batch_size'], a['dim'], a['num_frames'])
    dt = torch.float32
    out['x'] = (_rvq_example(a, out, device)).to(dt)
    shape = (a['num_quantizers'], a['codebook_size'], a['dim'])
    dt = torch.float32
    out['codebooks'] = (out.pop('_codebooks')).to(dt)
    return out




def _rvq_example(a, out, device):
    """Encoder outputs that lie near codewords: x = sum_q codebook_q[c_q] with codebook q scaled by 0.7^q, so every
    stage's nearest codeword is separated from the next by a wide margin (no near-ties: the codes are
    well-defined whatever the summation order), plus noise far below the last stage's scale."""
    nq, bins, dim = a["num_quantizers"], a["codebook_size"], a["dim"]
    scale = 0.7 ** torch.arange(nq, device=device, dtype=torch.float32)
    books = torch.randn(nq, bins, dim, device=device) * scale[:, None, None]
    codes = torch.randint(0, bins, (nq, a["batch_size"] * a["num_frames"]), device=device)
    x = torch.zeros(a["batch_size"] * a["num_frames"], dim, device=device)
    for q in range(nq):
        x += books[q][codes[q]]
    x += torch.randn_like(x) * 1e-8
    out["_codebooks"] = books
    return x.view(a["batch_size"], a["num_frames"], dim).permute(0, 2, 1).contiguous()


@torch.no_grad()
def run(x, codebooks):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    b, dim, t = x.shape
    residual = x.to(acc).permute(0, 2, 1).reshape(-1, dim)
    codes = []
    for embed in codebooks.to(acc):
        dist = -(residual.pow(2).sum(1, keepdim=True) - 2 * residual @ embed.t() + embed.pow(2).sum(1)[None, :])
        index = dist.max(dim=-1).indices
        residual = residual - embed[index]
        codes.append(index.view(b, t))
    return torch.stack(codes)
