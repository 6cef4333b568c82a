"""Reference code shared by recipes of several modules, kept once: a recipe formats a snippet into its reference
text (``REFERENCE = ACC + '''...'''``), so every problem that uses it carries the same lines.

Each snippet is one or more whole top-level functions, ending with a newline; the recipes' own text supplies the
blank lines around it. Changing one changes every folder whose reference holds it (`scripts/build-suite`
rewrites them; the lines a problem says it follows stay true only where the code is the same).
"""

ACC = '''def _acc(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32
'''
"""The working precision of a reference: fp32, or fp64 in the evaluator's fp64 golden run (l2, nvfp4)."""

E2M1_CODES = '''def _e2m1_codes(v):
    """fp32 values (already scaled) -> 4-bit codes, round-to-nearest-even, saturating at 6."""
    a = v.abs()
    magnitude = (a > 0.25).to(torch.uint8) + (a >= 0.75).to(torch.uint8) + (a > 1.25).to(torch.uint8) \\
        + (a >= 1.75).to(torch.uint8) + (a > 2.5).to(torch.uint8) + (a >= 3.5).to(torch.uint8) \\
        + (a > 5.0).to(torch.uint8)
    return magnitude | ((v < 0).to(torch.uint8) << 3)
'''
"""The NVFP4 (E2M1) encoder: already scaled fp32 values to 4-bit codes, round-to-nearest-even, saturating at 6
(quant's NVFP4 / MXFP4 problems, nvfp4)."""

WAN_ROPE_3D = '''def _rope_3d(x, f, hh, ww):
    # Wan rope_apply: head_dim/2 complex pairs split (c - 2*(c//3), c//3, c//3) over (frame, height, width)
    b, s, n, d = x.shape
    c = d // 2
    acc = _acc(x)
    parts = (c - 2 * (c // 3), c // 3, c // 3)
    angles = []
    for size, count, axis in ((f, parts[0], 0), (hh, parts[1], 1), (ww, parts[2], 2)):
        dim = 2 * count
        inv = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, device=x.device, dtype=acc) / dim))
        pos = torch.arange(size, device=x.device, dtype=acc)[:, None] * inv[None]
        shape = [1, 1, 1, count]
        shape[axis] = size
        angles.append(pos.view(shape).expand(f, hh, ww, count))
    angle = torch.cat(angles, dim=-1).reshape(s, 1, c)
    cos, sin = angle.cos(), angle.sin()
    xr = x.to(acc).unflatten(-1, (c, 2))
    re, im = xr[..., 0], xr[..., 1]
    out = torch.stack((re * cos - im * sin, re * sin + im * cos), dim=-1)
    return out.flatten(-2).to(x.dtype)
'''
"""Wan's 3-D RoPE (rope_apply): head_dim/2 complex pairs split over frame, height and width (needs ``_acc``; l2's
Wan2.1 and generation's Wan2.2 self-attention)."""

DLRM_INTERACT = '''def _interact(dense, sparse):
    features = torch.cat((dense.unsqueeze(1), sparse), dim=1)
    products = torch.bmm(features, features.transpose(1, 2))
    count = features.shape[1]
    rows, columns = torch.tril_indices(count, count, offset=-1, device=dense.device)
    return torch.cat((dense, products[:, rows, columns]), dim=1)
'''
"""DLRM's dot interaction: all pairwise dot products of the dense vector and the pooled embeddings, the strict
lower triangle after the dense vector (dlrm, l2)."""

SPLIT_OFFSETS = '''def _split(total, parts, minimum=1):
    """A random composition of `total` into `parts` sizes, each at least `minimum`."""
    extra = total - parts * minimum
    assert extra >= 0
    cuts = torch.sort(torch.randint(0, extra + 1, (parts - 1,))).values
    bounds = torch.cat([torch.zeros(1, dtype=torch.long), cuts, torch.full((1,), extra, dtype=torch.long)])
    return torch.diff(bounds) + minimum


def _offsets(sizes):
    return torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(sizes, 0)]).to(torch.int32)
'''
"""Ragged lengths for input generators: a random composition of a total into parts, and its offsets (indptr)
(fib, fib_serving)."""
