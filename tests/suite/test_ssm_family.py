"""The state-space and linear-attention family: its size, and its references against the real model code.

Each reference is compared, on small inputs in float64, with the torch path of the model it is taken
from in the installed transformers (modeling_mamba2, modeling_jamba, modeling_qwen3_next), so a
reference that drifts from the model fails here rather than in a user's run.
"""

from collections import Counter

import pytest

from library_internals import library_attribute, library_module
from solbench.suite.extract.extractor import load_reference

from .suite_folders import named, suite_problems

torch = pytest.importorskip("torch")
mamba2 = library_module("transformers.models.mamba2.modeling_mamba2")
jamba = library_module("transformers.models.jamba.modeling_jamba")
qwen3_next = library_module("transformers.models.qwen3_next.modeling_qwen3_next")
# transformers 5.25 renamed MambaRMSNormGated to Mamba2RMSNormGated
GatedRMSNorm = library_attribute(mamba2, "Mamba2RMSNormGated", "MambaRMSNormGated")

F = torch.nn.functional


def _reference(name: str):
    return load_reference(named(name).reference)["run"]


def _close(a, b, tol=1e-5):
    """The transformers paths compute in float32 inside (`.float()`, `.to(torch.float32)`): compare at that
    precision."""
    assert a.shape == b.shape
    a, b = a.detach().double(), b.detach().double()
    assert torch.allclose(a, b, atol=tol, rtol=tol), float((a - b).abs().max())


def test_the_family_has_at_least_upstreams_count_of_problems():
    family = [d for d in suite_problems() if "family:ssm" in d.tags]
    assert len(family) >= 18, len(family)
    sets = Counter(d.set for d in family)
    assert sets["L1"] >= 10 and sets["L2"] >= 3, sets
    assert sum(d.backward for d in family) >= 2
    assert all(d.set in ("L1", "L2") for d in family if d.backward)
    # two tiers: 16 GPU-scale workloads (workload.jsonl), 8 CPU ones (workload.cpu.jsonl)
    assert all(len(d.workloads) >= 16 and len(d.cpu_workloads or []) >= 8 for d in family)
    models = {d.model.name for d in family}
    assert {"Mamba2-2.7B", "Jamba-v0.1", "Qwen3-Next-80B-A3B-Thinking", "RWKV-7-World-1.5B"} <= models


def test_mamba2_chunk_scan_matches_transformers():
    run = _reference("nemotron-h-56b-base-8k_ssd_chunk_scan_h32_n256_tp8")
    torch.manual_seed(0)
    b, t, h, p, g, n = 1, 256, 4, 8, 1, 16  # the reference's chunk is Nemotron-H's 128: two chunks
    x, dt = torch.randn(b, t, h, p, dtype=torch.float64), torch.randn(b, t, h, dtype=torch.float64) * 0.5
    A_log, D, dt_bias = torch.rand(h).double() * 2, torch.rand(h).double(), torch.rand(h).double() - 3
    B, C = torch.randn(b, t, g, n, dtype=torch.float64), torch.randn(b, t, g, n, dtype=torch.float64)
    init = torch.randn(b, h, p, n, dtype=torch.float64)
    y, final = run(x, dt, A_log, B, C, D, dt_bias, init)
    # the torch path's own arithmetic is float32 inside; compare at its precision
    y_hf, final_hf = mamba2.mamba2_chunk_scan(
        x,
        dt,
        -torch.exp(A_log),
        B,
        C,
        128,
        D=D,
        dt_bias=dt_bias,
        initial_states=init,
        dt_softplus=True,
        return_final_states=True,
    )
    _close(y, y_hf, 1e-4)
    _close(final, final_hf, 1e-4)


@pytest.mark.slow
def test_mamba2_mixer_scan_matches_the_nemotron_h_torch_path():
    """conv1d + SiLU, split, mamba2_chunk_scan and MambaRMSNormGated composed as NemotronHMamba2Mixer does."""
    run = _reference("nvidia-nemotron-3-nano-30b-a3b_mamba2_mixer_scan_h64_n128")
    torch.manual_seed(7)
    b, t, h, p, g, n = 1, 128, 64, 64, 8, 128  # one chunk; the inter-chunk path is checked above
    d_inner, conv_dim = h * p, h * p + 2 * g * n
    proj = torch.randn(b, t, d_inner + conv_dim + h, dtype=torch.float64)
    conv_w, conv_b = torch.randn(conv_dim, 4).double() * 0.5, torch.randn(conv_dim).double() * 0.1
    dt_bias, A_log, D = torch.rand(h).double() - 4, torch.rand(h).double() * 2, torch.rand(h).double()
    norm_w = torch.rand(d_inner).double() + 0.5
    out = run(proj, conv_w, conv_b, dt_bias, A_log, D, norm_w)

    z, xBC, dt = proj.split([d_inner, conv_dim, h], dim=-1)
    xBC = mamba2.causal_conv1d_fn(xBC.transpose(1, 2), conv_w, conv_b, activation="silu").transpose(1, 2)
    x, B, C = xBC.split([d_inner, g * n, g * n], dim=-1)
    y = mamba2.mamba2_chunk_scan(
        x.reshape(b, t, h, p),
        dt,
        -torch.exp(A_log),
        B.reshape(b, t, g, n),
        C.reshape(b, t, g, n),
        128,
        D=D,
        dt_bias=dt_bias,
        dt_softplus=True,
    )
    norm = GatedRMSNorm(d_inner, group_size=d_inner // g, eps=1e-5).double()
    norm.weight.data.copy_(norm_w)
    _close(out, norm(y.reshape(b, t, d_inner).double(), z), 1e-4)


def test_mamba2_segsum_and_state_update_match_transformers():
    torch.manual_seed(1)
    dA = -torch.rand(2, 3, 2, 256, dtype=torch.float64) * 0.1
    _close(_reference("mamba2-2-7b_ssd_segsum_h80_c256")(dA), torch.exp(mamba2.segment_sum(dA)))

    b, h, p, g, n = 2, 8, 4, 2, 16
    state = torch.randn(b, h, p, n, dtype=torch.float64)
    x, dt = torch.randn(b, h, p).double(), torch.randn(b, h).double()
    A_log, D, dt_bias = torch.rand(h).double(), torch.rand(h).double(), torch.rand(h).double()
    B, C = torch.randn(b, g, n).double(), torch.randn(b, g, n).double()
    out, new_state = _reference("nvidia-nemotron-3-nano-30b-a3b_mamba2_state_update_h64_n128")(
        state, x, dt, A_log, B, C, D, dt_bias
    )
    hf_state = state.clone()
    # as Mamba2Mixer calls it: dt, A, D and dt_bias expanded over head_dim, z=None
    out_hf = mamba2.mamba2_selective_state_update(
        hf_state,
        x,
        dt[..., None].expand(-1, -1, p),
        -torch.exp(A_log)[:, None, None].expand(-1, p, n),
        B,
        C,
        D=D[:, None].expand(-1, p),
        dt_bias=dt_bias[:, None].expand(-1, p),
        dt_softplus=True,
    )
    _close(out, out_hf)
    _close(new_state, hf_state)


def test_mamba2_conv_and_gated_norm_match_transformers():
    torch.manual_seed(2)
    x, w, bias = torch.randn(2, 6, 9).double(), torch.randn(6, 4).double(), torch.randn(6).double()
    ref = _reference("nemotron-h-56b-base-8k_causal_conv1d_silu_c20480")(x, w, bias)
    _close(ref, mamba2.causal_conv1d_fn(x, w, bias, activation="silu"))

    hidden, gate, weight = (
        torch.randn(5, 2048 * 8).double(),
        torch.randn(5, 2048 * 8).double(),
        torch.rand(16384).double(),
    )
    norm = GatedRMSNorm(16384, group_size=2048, eps=1e-5).double()
    norm.weight.data.copy_(weight)
    ref = _reference("nemotron-h-56b-base-8k_gated_rmsnorm_h2048_tp8")(hidden, gate, weight)
    _close(ref, norm(hidden, gate))


def test_selective_scan_matches_jamba():
    torch.manual_seed(3)
    b, d, n, t = 2, 16, 4, 24
    u, delta, z = (torch.randn(b, d, t, dtype=torch.float64) for _ in range(3))
    A = -torch.rand(d, n, dtype=torch.float64) * 4
    B, C = torch.randn(b, n, t, dtype=torch.float64), torch.randn(b, n, t, dtype=torch.float64)
    D, bias = torch.rand(d, dtype=torch.float64), torch.rand(d, dtype=torch.float64) - 2
    y = _reference("jamba-v0-1_selective_scan_d8192_n16")(u, delta, A, B, C, D, z, bias)
    y_hf = jamba.mamba_selective_scan(u, delta, A, B, C, D=D, z=z, delta_bias=bias, delta_softplus=True)
    _close(y, y_hf)


def test_gated_delta_rule_matches_qwen3_next():
    torch.manual_seed(4)
    b, t, hk, hv, dk, dv = 1, 100, 2, 4, 16, 8  # 100 tokens: one full chunk of 64 and a padded one
    q, k = torch.randn(b, t, hk, dk).double(), torch.randn(b, t, hk, dk).double()
    v = torch.randn(b, t, hv, dv).double()
    g, beta = F.logsigmoid(torch.randn(b, t, hv).double() + 2), torch.rand(b, t, hv).double()
    init = torch.randn(b, hv, dk, dv).double() * 0.1
    out, final = _reference("qwen3-next-80b-a3b-thinking_gated_delta_rule_chunked_hv32")(q, k, v, g, beta, init)
    out_hf, final_hf = qwen3_next.torch_chunk_gated_delta_rule(
        q, k, v, g, beta, initial_state=init, output_final_state=True, use_qk_l2norm_in_kernel=True
    )
    _close(out, out_hf, 1e-5)  # the torch path computes in float32
    _close(final, final_hf, 1e-5)

    step = _reference("qwen3-next-80b-a3b-thinking_gated_delta_rule_decode_hv32")
    o1, s1 = step(q[:, 0], k[:, 0], v[:, 0], g[:, 0], beta[:, 0], init)
    o_hf, s_hf = qwen3_next.torch_recurrent_gated_delta_rule(
        q[:, :1],
        k[:, :1],
        v[:, :1],
        g[:, :1],
        beta[:, :1],
        initial_state=init,
        output_final_state=True,
        use_qk_l2norm_in_kernel=True,
    )
    _close(o1, o_hf[:, 0], 1e-5)
    _close(s1, s_hf, 1e-5)


def test_qwen3_next_gated_norm_matches():
    torch.manual_seed(5)
    hidden, gate, weight = torch.randn(3, 32, 128).double(), torch.randn(3, 32, 128).double(), torch.rand(128).double()
    norm = qwen3_next.Qwen3NextRMSNormGated(128, eps=1e-6).double()
    norm.weight.data.copy_(weight)
    _close(_reference("qwen3-next-80b-a3b-thinking_gated_rmsnorm_hv32_d128")(hidden, gate, weight), norm(hidden, gate))


def test_wkv7_recurrence_matches_the_dense_transition():
    """RWKV-7 has no transformers model: check the recurrence against its matrix form
    S_t = S (diag(w) - kk^T (kk a)) + v k^T."""
    torch.manual_seed(6)
    b, t, h, n = 1, 5, 2, 4
    r, k, v, a = (torch.randn(b, t, h, n).double() for _ in range(4))
    w = torch.rand(b, t, h, n).double()
    kk = F.normalize(torch.randn(b, t, h, n).double(), dim=-1)
    state = torch.randn(b, h, n, n).double()
    y, final = _reference("rwkv-7-world-1-5b_wkv7_h32_n64")(r, w, k, v, kk, a, state)
    s = state.clone()
    for i in range(t):
        for j in range(h):
            transition = torch.diag(w[0, i, j]) - torch.outer(kk[0, i, j], kk[0, i, j] * a[0, i, j])
            s[0, j] = s[0, j] @ transition + torch.outer(v[0, i, j], k[0, i, j])
            _close(y[0, i, j], s[0, j] @ r[0, i, j])
    _close(final, s)


def test_rwkv7_decay_backward_matches_autograd():
    torch.manual_seed(8)
    x, w1, w2, w0 = (
        torch.randn(5, 16).double(),
        torch.randn(16, 4).double(),
        torch.randn(4, 16).double(),
        torch.randn(16).double(),
    )
    grad = torch.randn(5, 16).double()
    ours = _reference("rwkv-7-world-1-5b_time_decay_backward_h2048_r96")(x, w1, w2, w0, grad)
    params = [t.clone().requires_grad_() for t in (x, w1, w2, w0)]
    decay = _reference("rwkv-7-world-1-5b_time_decay_h2048_r96")
    with torch.enable_grad():
        out = torch.exp(-torch.sigmoid(torch.tanh(params[0] @ params[1]) @ params[2] + params[3]) / 1.6487212707001282)
        expected = torch.autograd.grad(out, params, grad)
    _close(decay(x, w1, w2, w0), out)
    for got, want in zip(ours, expected):
        _close(got, want)
