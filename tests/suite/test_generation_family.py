"""Image and video generation problems: coverage of the models, and references against independent forms.

diffusers is not installed, so each check rewrites the published computation another way (BFL's 2x2
rotation matrices, Sana's padded-value linear attention, a Conv3d patch embedding, the whole-clip causal
convolution) and compares in float64 on small inputs.
"""

from collections import Counter

import pytest

from solbench.suite.extract.extractor import load_reference

from .suite_folders import made_by

torch = pytest.importorskip("torch")
F = torch.nn.functional

MODELS = {
    "FLUX.1-schnell (transformer)",
    "Hunyuan-DiT (DiT-g/2)",
    "Sana 1600M 1024px",
    "SDXL base 1.0 (UNet)",
    "Stable Diffusion 2.1 768-v (UNet)",
    "CogVideoX-2B",
    "CogVideoX-5B",
    "CogVideoX1.5-5B",
    "Mochi 1 preview (AsymmDiT)",
    "Stable Video Diffusion (VideoUNet)",
    "Wan2.2-T2V-A14B",
    "Wan2.2-TI2V-5B",
}


def _run(name_part: str):
    (draft,) = [d for d in made_by("generation") if name_part in d.name]
    return load_reference(draft.reference)["run"]


def _close(a, b, tol=1e-10):
    assert a.shape == b.shape
    assert torch.allclose(a.double(), b.double(), atol=tol, rtol=tol), float((a.double() - b.double()).abs().max())


def test_every_model_has_a_problem_and_the_families_are_tagged():
    drafts = made_by("generation")
    assert {d.model.name for d in drafts} == MODELS
    sets = Counter(d.set for d in drafts)
    assert sets["L1"] >= 6 and sets["L2"] >= 10, sets
    families = Counter(t for d in drafts for t in d.tags if t.startswith("family:"))
    assert families["family:attention"] >= 10 and families["family:rope_kv"] >= 2, families
    assert any(d.backward for d in drafts) and all(d.op_type.endswith("_backward") == d.backward for d in drafts)
    for d in drafts:
        gpu, cpu = d.workloads, d.cpu_workloads or []
        assert len(gpu) >= 16 and len(cpu) >= 8, d.name
        assert not {tuple(sorted(w.items())) for w in gpu} & {tuple(sorted(w.items())) for w in cpu}, d.name


def test_flux_rope_matches_bfl_rotation_matrices():
    run = _run("flux-1-schnell_rope_3axis")
    torch.manual_seed(0)
    b, heads, length, hd = 1, 2, 12, 128
    q, k = (
        torch.randn(b, heads, length, hd, dtype=torch.float64),
        torch.randn(b, heads, length, hd, dtype=torch.float64),
    )
    ids = torch.randint(0, 9, (b, length, 3)).double()
    q_out, k_out = run(q, k, ids)
    # flux/math.py: rope() builds [[cos, -sin], [sin, cos]] per pair; apply_rope multiplies (x0, x1) by it
    tables = []
    for axis, dim in enumerate((16, 56, 56)):
        omega = 1.0 / 10000 ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
        out = ids[..., axis, None] * omega
        tables.append(torch.stack([out.cos(), -out.sin(), out.sin(), out.cos()], dim=-1).view(b, length, -1, 2, 2))
    pe = torch.cat(tables, dim=-3)[:, None]
    for x, got in ((q, q_out), (k, k_out)):
        x_ = x.reshape(*x.shape[:-1], -1, 1, 2)
        _close((pe[..., 0] * x_[..., 0] + pe[..., 1] * x_[..., 1]).reshape(x.shape), got)


def test_sana_linear_attention_matches_the_padded_value_form():
    run = _run("sana-1600m-1024px_relu_linear_attention_block")
    torch.manual_seed(0)
    b, hh, ww, d, heads = 1, 3, 4, 2240, 70
    x = torch.randn(b, hh, ww, d, dtype=torch.float64)
    t, table = torch.randn(b, 6 * d, dtype=torch.float64) * 0.3, torch.randn(6, d, dtype=torch.float64) * 0.05
    qkv_w, proj_w = (
        torch.randn(3 * d, d, dtype=torch.float64) * d**-0.5,
        torch.randn(d, d, dtype=torch.float64) * d**-0.5,
    )
    proj_b = torch.randn(d, dtype=torch.float64) * 0.1
    got = run(x, t, table, qkv_w, proj_w, proj_b)
    # SanaMSBlock + diffusers SanaLinearAttnProcessor2_0 (v padded with a row of ones; the last row normalises)
    shift, scale, gate = (table[None] + t.view(b, 6, d))[:, :3].unbind(1)
    n = hh * ww
    h = F.layer_norm(x.view(b, n, d), (d,), eps=1e-6) * (1 + scale[:, None]) + shift[:, None]
    q, k, v = F.linear(h, qkv_w).chunk(3, dim=-1)
    q = F.relu(q.transpose(1, 2).unflatten(1, (heads, -1)))  # b, h, d_h, n
    k = F.relu(k.transpose(1, 2).unflatten(1, (heads, -1)).transpose(2, 3))  # b, h, n, d_h
    v = F.pad(v.transpose(1, 2).unflatten(1, (heads, -1)), (0, 0, 0, 1), value=1.0)
    o = torch.matmul(torch.matmul(v, k), q)
    o = (o[:, :, :-1] / (o[:, :, -1:] + 1e-15)).flatten(1, 2).transpose(1, 2)
    _close(x.view(b, n, d) + gate[:, None] * F.linear(o, proj_w, proj_b), got.view(b, n, d))


def test_cogvideox15_patch_embed_is_a_strided_conv3d():
    run = _run("cogvideox1-5-5b_patch_embed")
    torch.manual_seed(0)
    b, f, c, hh, ww, d = 1, 4, 16, 4, 6, 64  # widths follow the weights: small ones suffice
    latents = torch.randn(b, f, c, hh, ww, dtype=torch.float64)
    text = torch.randn(b, 7, 32, dtype=torch.float64)
    tw, tb = torch.randn(d, 32, dtype=torch.float64) * 0.1, torch.randn(d, dtype=torch.float64)
    pw, pb = torch.randn(d, c * 8, dtype=torch.float64) * 0.1, torch.randn(d, dtype=torch.float64)
    got = run(latents, text, tw, tb, pw, pb)
    video = F.conv3d(latents.transpose(1, 2), pw.view(d, c, 2, 2, 2), pb, stride=2).flatten(2).transpose(1, 2)
    _close(torch.cat((F.linear(text, tw, tb), video), dim=1), got)


@pytest.mark.parametrize("name", ["wan2-2-ti2v-5b_vae_causal_conv3d", "wan2-2-ti2v-5b_vae_causal_resblock"])
def test_wan_vae_chunks_with_the_cache_equal_the_whole_clip(name):
    """Decoding chunk by chunk with feat_cache must give the causal result on the whole clip."""
    run = _run(name)
    torch.manual_seed(0)
    c = 64  # the channel count follows the weights; 64 keeps the float64 convolutions fast
    b, t, hh, ww = 1, 3, 3, 2
    x = torch.randn(b, c, t, hh, ww, dtype=torch.float64)
    w = torch.randn(c, c, 3, 3, 3, dtype=torch.float64) * (27 * c) ** -0.5
    bias = torch.randn(c, dtype=torch.float64) * 0.1
    zeros = torch.zeros(b, c, 2, hh, ww, dtype=torch.float64)
    if "conv3d" in name:
        whole, _ = run(x, zeros, w, bias)
        first, cache = run(x[:, :, :1], zeros, w, bias)
        second, _ = run(x[:, :, 1:], cache, w, bias)
        # CausalConv3d without a cache: 2 frames of zero padding in front
        _close(whole, F.conv3d(F.pad(x, (1, 1, 1, 1, 2, 0)), w, bias))
    else:
        gamma1, gamma2 = torch.rand(c, dtype=torch.float64) + 0.5, torch.rand(c, dtype=torch.float64) + 0.5
        w2 = torch.randn(c, c, 3, 3, 3, dtype=torch.float64) * (27 * c) ** -0.5
        whole, _, _ = run(x, zeros, zeros, gamma1, w, bias, gamma2, w2, bias)
        first, c1, c2 = run(x[:, :, :1], zeros, zeros, gamma1, w, bias, gamma2, w2, bias)
        second, _, _ = run(x[:, :, 1:], c1, c2, gamma1, w, bias, gamma2, w2, bias)
    _close(torch.cat((first, second), dim=2), whole)
