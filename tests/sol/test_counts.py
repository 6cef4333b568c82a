"""Hand-derived counts for each op family, and agreement with torch.utils.flop_counter."""

import math

import pytest
import torch

from conftest import write_problem
from solbench.hardware.spec import HardwareSpec
from solbench.sol import analyze_problem
from solbench.spec import load_problem

# Round numbers so that expected times are easy to derive by hand.
TOY = HardwareSpec(
    id="toy",
    name="toy",
    kind="gpu",
    memory_bandwidth_bytes_per_s=1e12,
    tensor_flops={"bfloat16": 100e12, "float16": 100e12, "float8": 200e12, "float4": 400e12, "tf32": 30e12},
    vector_flops={"float32": 10e12, "float64": 5e12},
    special_ops_per_s=1e12,
)


def analyze(tmp_path, inputs: dict, outputs: dict, reference: str, axes=None, workload_axes=None, **extra):
    definition = {
        "name": "p",
        "axes": axes or {},
        "inputs": inputs,
        "outputs": outputs,
        "reference": reference,
        **extra,
    }
    workload = {
        "uuid": "w",
        "axes": workload_axes or {},
        "inputs": {
            name: {"type": "random"} if spec["shape"] is not None else {"type": "scalar", "value": 1.0}
            for name, spec in inputs.items()
        },
    }
    [result] = analyze_problem(load_problem(write_problem(tmp_path / "p", definition, [workload])), TOY, explain=True)
    assert result.coverage.full, result.coverage
    return result


def t(shape, dtype="float32"):
    return {"shape": [str(d) for d in shape], "dtype": dtype}


def test_linear_is_an_addmm(tmp_path):
    result = analyze(
        tmp_path,
        {"x": t([8, 64], "bfloat16"), "w": t([32, 64], "bfloat16"), "b": t([32], "bfloat16")},
        {"y": t([8, 32], "bfloat16")},
        "import torch.nn.functional as F\ndef run(x, w, b):\n    return F.linear(x, w, b)\n",
    )
    assert result.flops_by_class["matrix"] == {"bfloat16": 2 * 8 * 64 * 32}
    assert result.flops_by_class["vector"]["float16"] == 8 * 32  # the bias add
    assert result.bytes == 2 * (8 * 64 + 32 * 64 + 32 + 8 * 32)
    assert result.t_compute_ms["matrix"] == pytest.approx(2 * 8 * 64 * 32 / 100e12 * 1e3)
    assert result.bound == "memory" and result.t_sol_ms == pytest.approx(result.bytes / 1e12 * 1e3)


@pytest.mark.parametrize(
    "reference, inputs",
    [
        ("def run(a, b):\n    return a @ b\n", {"a": [48, 96], "b": [96, 40]}),
        ("import torch\ndef run(a, b):\n    return torch.bmm(a, b)\n", {"a": [3, 48, 96], "b": [3, 96, 40]}),
        (
            "import torch\ndef run(c, a, b):\n    return torch.addmm(c, a, b)\n",
            {"c": [48, 40], "a": [48, 96], "b": [96, 40]},
        ),
        (
            "import torch\ndef run(c, a, b):\n    return torch.baddbmm(c, a, b)\n",
            {"c": [3, 48, 40], "a": [3, 48, 96], "b": [3, 96, 40]},
        ),
        (
            "import torch\ndef run(a, b):\n    return torch.einsum('bhqd,bhkd->bhqk', a, b)\n",
            {"a": [2, 4, 16, 32], "b": [2, 4, 24, 32]},
        ),
    ],
)
def test_matrix_flops_agree_with_torch_flop_counter(tmp_path, reference, inputs):
    """The counter counts the products only; our addmm/baddbmm also count the add on vector units."""
    from torch.utils.flop_counter import FlopCounterMode

    namespace = {}
    exec(reference, namespace)  # the test's own reference code
    values = [torch.randn(shape) for shape in inputs.values()]
    with FlopCounterMode(display=False) as counter:
        out = namespace["run"](*values)
    result = analyze(tmp_path, {n: t(s) for n, s in inputs.items()}, {"y": t(list(out.shape))}, reference)
    assert result.flops_by_class["matrix"]["float32"] == counter.get_total_flops()


def test_bmm_and_einsum(tmp_path):
    result = analyze(
        tmp_path,
        {"a": t([4, 16, 32], "float16"), "b": t([4, 32, 8], "float16")},
        {"c": t([4, 16, 8], "float16")},
        "import torch\ndef run(a, b):\n    return torch.einsum('bmk,bkn->bmn', a, b)\n",
    )
    assert result.flops_by_class["matrix"] == {"float16": 2 * 4 * 16 * 32 * 8}


def test_fp32_matmul_runs_at_the_faster_of_cuda_cores_and_3xtf32(tmp_path):
    result = analyze(
        tmp_path, {"a": t([512, 512]), "b": t([512, 512])}, {"c": t([512, 512])}, "def run(a, b):\n    return a @ b\n"
    )
    assert result.t_compute_ms["matrix"] == pytest.approx(2 * 512**3 / 10e12 * 1e3)  # 10 > 30/3


@pytest.mark.parametrize(
    "shape_in, weight, groups, transposed, stride",
    [
        ([2, 8, 16, 16], [16, 8, 3, 3], 1, False, 1),  # plain 2-D
        ([2, 8, 16, 16], [16, 2, 3, 3], 4, False, 1),  # grouped
        ([2, 8, 16, 16], [8, 1, 3, 3], 8, False, 2),  # depthwise, strided
        ([2, 4, 32], [8, 4, 5], 1, False, 1),  # 1-D
        ([1, 4, 6, 8, 8], [4, 4, 3, 3, 3], 1, False, 1),  # 3-D
        ([2, 8, 7, 7], [8, 4, 4, 4], 1, True, 2),  # transposed
    ],
)
def test_convolutions_match_hand_counts_and_the_flop_counter(tmp_path, shape_in, weight, groups, transposed, stride):
    from torch.utils.flop_counter import FlopCounterMode

    x, w = torch.randn(shape_in), torch.randn(weight)
    dims = len(shape_in) - 2
    function = getattr(torch.nn.functional, f"conv_transpose{dims}d" if transposed else f"conv{dims}d")
    out = function(x, w, stride=stride, groups=groups)
    kernel = math.prod(weight[2:])
    if transposed:
        expected = 2 * x.numel() * weight[1] * kernel
    else:
        expected = 2 * out.numel() * weight[1] * kernel
    with FlopCounterMode(display=False) as counter:
        function(x, w, stride=stride, groups=groups)
    assert counter.get_total_flops() == expected
    reference = (
        f"import torch.nn.functional as F\ndef run(x, w):\n    return F.{function.__name__}(x, w, "
        f"stride={stride}, groups={groups})\n"
    )
    result = analyze(tmp_path, {"x": t(shape_in), "w": t(weight)}, {"y": t(list(out.shape))}, reference)
    assert result.flops_by_class["matrix"]["float32"] == expected


@pytest.mark.parametrize(
    "causal, q_heads, kv_heads, q_len, k_len",
    [(False, 8, 8, 64, 64), (True, 8, 8, 64, 64), (True, 8, 2, 64, 64), (True, 4, 4, 16, 48), (False, 8, 2, 1, 300)],
)
def test_attention_pairs_for_causal_and_gqa(tmp_path, causal, q_heads, kv_heads, q_len, k_len):
    head_dim = 32
    reference = (
        "import torch.nn.functional as F\ndef run(q, k, v):\n    return F.scaled_dot_product_attention("
        f"q, k, v, is_causal={causal}, enable_gqa=True)\n"
    )
    result = analyze(
        tmp_path,
        {
            "q": t([2, q_heads, q_len, head_dim], "bfloat16"),
            "k": t([2, kv_heads, k_len, head_dim], "bfloat16"),
            "v": t([2, kv_heads, k_len, head_dim], "bfloat16"),
        },
        {"o": t([2, q_heads, q_len, head_dim], "bfloat16")},
        reference,
    )
    # Top-left causal alignment: row i sees keys 0..i.
    pairs = sum(min(i + 1, k_len) for i in range(q_len)) if causal else q_len * k_len
    assert result.flops_by_class["matrix"] == {"bfloat16": 2 * 2 * q_heads * pairs * (head_dim + head_dim)}
    assert result.flops_by_class["special"] == 2 * q_heads * pairs
    kv_bytes = 2 * 2 * 2 * kv_heads * k_len * head_dim  # GQA: K and V bytes shrink with the KV heads
    assert result.bytes == 2 * 2 * 2 * q_heads * q_len * head_dim + kv_bytes


def test_embedding_reads_only_the_gathered_rows(tmp_path):
    axes = {"vocab_size": {"type": "const", "value": 50000}, "tokens": {"type": "var"}}
    result = analyze(
        tmp_path,
        {
            "input_ids": {"shape": ["tokens"], "dtype": "int64"},
            "weight": {"shape": ["vocab_size", "64"], "dtype": "bfloat16"},
        },
        {"out": {"shape": ["tokens", "64"], "dtype": "bfloat16"}},
        "import torch.nn.functional as F\ndef run(input_ids, weight):\n    return F.embedding(input_ids, weight)\n",
        axes=axes,
        workload_axes={"tokens": 10},
    )
    assert result.bytes == 10 * 8 + 10 * 64 * 2 + 10 * 64 * 2  # ids + touched rows + output
    assert result.unfused_bytes > 50000 * 64 * 2  # the op-by-op view reads the whole table


FP8_BLOCK_GEMM = """
import torch

def run(a, a_scale, b, b_scale):
    # 128x128 block scales for B, per-row 128-column scales for A (DeepSeek-V3 style)
    a_deq = a.to(torch.float32) * a_scale.repeat_interleave(128, dim=1)
    b_deq = b.to(torch.float32) * b_scale.repeat_interleave(128, dim=0).repeat_interleave(128, dim=1)
    return (a_deq @ b_deq.T).to(torch.bfloat16)
"""


def test_fp8_block_scaled_gemm_counts_at_the_fp8_rate(tmp_path):
    m, n, k = 64, 256, 512
    result = analyze(
        tmp_path,
        {
            "a": t([m, k], "float8_e4m3fn"),
            "a_scale": t([m, k // 128]),
            "b": t([n, k], "float8_e4m3fn"),
            "b_scale": t([n // 128, k // 128]),
        },
        {"c": t([m, n], "bfloat16")},
        FP8_BLOCK_GEMM,
    )
    assert result.flops_by_class["matrix"] == {"float8": 2 * m * n * k}
    assert result.t_compute_ms["matrix"] == pytest.approx(2 * m * n * k / 200e12 * 1e3)
    assert result.bytes == m * k + m * (k // 128) * 4 + n * k + (n // 128) * (k // 128) * 4 + m * n * 2


NVFP4_GEMM = """
import torch

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]

def dequantize(packed, scales, global_scale):
    table = torch.tensor(E2M1, dtype=torch.float32, device=packed.device)
    raw = packed.view(torch.uint8).to(torch.int64)
    values = torch.stack([table[raw & 15], table[raw >> 4]], dim=-1).flatten(-2)
    return values * scales.to(torch.float32).repeat_interleave(16, dim=-1) * global_scale

def run(a, a_scales, b, b_scales, global_scale):
    return (dequantize(a, a_scales, global_scale) @ dequantize(b, b_scales, global_scale).T).to(torch.bfloat16)
"""


def test_nvfp4_gemm_with_16_element_scales(tmp_path):
    m, n, k = 32, 64, 256
    result = analyze(
        tmp_path,
        {
            "a": t([m, k // 2], "float4_e2m1fn_x2"),
            "a_scales": t([m, k // 16], "float8_e4m3fn"),
            "b": t([n, k // 2], "float4_e2m1fn_x2"),
            "b_scales": t([n, k // 16], "float8_e4m3fn"),
            "global_scale": {"shape": None, "dtype": "float32"},
        },
        {"c": t([m, n], "bfloat16")},
        NVFP4_GEMM,
    )
    assert result.flops_by_class["matrix"] == {"float4": 2 * m * n * k}
    packed = (m + n) * k // 2
    scales = (m + n) * k // 16
    assert result.bytes == packed + scales + m * n * 2


def test_elementwise_and_transcendentals(tmp_path):
    result = analyze(
        tmp_path,
        {"x": t([1000])},
        {"y": t([1000])},
        "import torch\ndef run(x):\n    return torch.exp(x) * 2 + torch.tanh(x)\n",
    )
    assert result.flops_by_class["special"] == 2000  # exp and tanh
    assert result.flops_by_class["vector"] == {"float32": 2000}  # mul and add
    assert result.bytes == 8000


def test_softmax_and_rmsnorm_are_covered(tmp_path):
    result = analyze(
        tmp_path,
        {"x": t([16, 128]), "w": t([128])},
        {"y": t([16, 128])},
        "import torch\ndef run(x, w):\n    y = torch.softmax(x, -1)\n"
        "    return torch.nn.functional.rms_norm(y, (128,), w, 1e-6)\n",
    )
    assert result.flops > 0 and result.flops_by_class["special"] >= 16 * 128


def test_ops_without_a_rule_are_reported_not_free(tmp_path):
    definition = {"x": t([64, 64])}
    from solbench.sol.analysis import analyze_problem as run_analysis

    problem = load_problem(
        write_problem(
            tmp_path / "q",
            {
                "name": "q",
                "axes": {},
                "inputs": definition,
                "outputs": {"y": t([64, 64])},
                "reference": "import torch\ndef run(x):\n    return torch.linalg.inv(x)\n",
            },
            [{"uuid": "w", "axes": {}, "inputs": {"x": {"type": "random"}}}],
        )
    )
    [result] = run_analysis(problem, TOY)
    assert not result.coverage.full
    assert {u.op for u in result.coverage.uncovered} & {"linalg_inv_ex", "linalg_lu_factor_ex", "linalg_solve_ex"}
    assert result.t_sol_ms >= result.bytes / 1e12 * 1e3  # still bounded by memory


def test_an_output_returned_twice_is_written_once(tmp_path):
    result = analyze(
        tmp_path, {"x": t([256])}, {"a": t([256]), "b": t([256])}, "def run(x):\n    y = x * 2\n    return y, y\n"
    )
    assert result.bytes == 256 * 4 * 2


MANUAL_CAUSAL = """
import math
import torch

def run(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    length = q.shape[-2]
    mask = torch.triu(torch.ones(length, length, dtype=torch.bool, device=q.device), diagonal=1)
    probs = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
    return probs @ v
"""

MANUAL_CAUSAL_BIAS = """
import torch

def run(q, k, v):
    length = q.shape[-2]
    bias = torch.triu(torch.full((length, length), float("-inf"), dtype=q.dtype, device=q.device), diagonal=1)
    return torch.softmax(q @ k.transpose(-2, -1) * 0.125 + bias, dim=-1) @ v
"""


@pytest.mark.parametrize("reference", [MANUAL_CAUSAL, MANUAL_CAUSAL_BIAS])
def test_hand_written_causal_mask_counts_only_the_kept_pairs(tmp_path, reference):
    """T_SOL must stay a lower bound for a kernel that skips masked blocks: same pairs as is_causal=True."""
    heads, length, dim = 4, 64, 32
    result = analyze(
        tmp_path,
        {n: t([1, heads, length, dim], "float16") for n in "qkv"},
        {"o": t([1, heads, length, dim], "float16")},
        reference,
    )
    pairs = length * (length + 1) // 2
    assert result.flops_by_class["matrix"]["float16"] == pytest.approx(2 * heads * pairs * 2 * dim)


def test_attention_backward_counts_five_matmuls_over_kept_pairs(tmp_path):
    reference = (
        "import torch\nimport torch.nn.functional as F\n"
        "def run(q, k, v, g):\n    with torch.enable_grad():\n"
        "        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))\n"
        "        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        "        return torch.autograd.grad(o, (q, k, v), g)\n"
    )
    shape = [1, 2, 64, 32]
    result = analyze(tmp_path, {n: t(shape) for n in "qkvg"}, {n: t(shape) for n in ("dq", "dk", "dv")}, reference)
    pairs = 64 * 65 // 2
    forward, backward = 2 * 2 * pairs * (32 + 32), 2 * 2 * pairs * (3 * 32 + 2 * 32)
    assert sum(result.flops_by_class["matrix"].values()) == forward + backward


def test_layer_and_group_norm_backward_are_covered(tmp_path):
    reference = (
        "import torch\nimport torch.nn.functional as F\n"
        "def run(x, g):\n    with torch.enable_grad():\n        x = x.detach().requires_grad_()\n"
        "        y = F.group_norm(F.layer_norm(x, (16,)), 4)\n"
        "        return torch.autograd.grad(y, (x,), g)\n"
    )
    result = analyze(tmp_path, {"x": t([2, 8, 16]), "g": t([2, 8, 16])}, {"dx": t([2, 8, 16])}, reference)
    assert result.flops_by_class["vector"]["float32"] >= 2 * 8 * 2 * 8 * 16


def test_masked_sdpa_math_path_is_covered(tmp_path):
    reference = (
        "import torch\nimport torch.nn.functional as F\n"
        "def run(q, m):\n    return F.scaled_dot_product_attention(q, q, q, attn_mask=m)\n"
    )
    result = analyze(tmp_path, {"q": t([1, 2, 49, 32]), "m": t([1, 2, 49, 49])}, {"o": t([1, 2, 49, 32])}, reference)
    assert result.flops_by_class["special"] >= 2 * 49 * 49


def test_moe_routing_bookkeeping_is_covered(tmp_path):
    """floor_divide (token of each expert slot) is pointwise; histc (tokens per expert) one update per element."""
    result = analyze(
        tmp_path,
        {"slots": t([64], "int64")},
        {"y": t([64], "int64"), "counts": t([8])},
        "import torch\ndef run(slots):\n    idx = torch.ops.aten.floor_divide.default(slots, 8)\n"
        "    return idx, torch.histc(slots.float(), 8, 0, 7)\n",
    )
    assert result.flops_by_class["vector"]["float32"] >= 64


def test_slice_backward_is_a_copy(tmp_path):
    result = analyze(
        tmp_path,
        {"x": t([4, 16])},
        {"g": t([4, 16])},
        "import torch\ndef run(x):\n    with torch.enable_grad():\n"
        "        x = x.detach().requires_grad_()\n"
        "        return torch.autograd.grad(x[:, 8:].sum(), x)[0]\n",
    )
    assert result.coverage.full


@pytest.mark.parametrize("causal", [True, False])
def test_attention_with_a_narrower_value_head_counts_like_fused_attention(tmp_path, causal):
    """MLA's q/k heads of 192 and v heads of 128 have no fused CPU kernel: PyTorch's math path runs full
    products in fp32. The call is charged as one attention: the kept pairs, at the inputs' precision."""
    heads, length, qk, v = 4, 64, 192, 128
    reference = (
        "import torch.nn.functional as F\ndef run(q, k, v):\n    return F.scaled_dot_product_attention("
        f"q, k, v, is_causal={causal}, scale=0.1)\n"
    )
    result = analyze(
        tmp_path,
        {
            "q": t([1, heads, length, qk], "bfloat16"),
            "k": t([1, heads, length, qk], "bfloat16"),
            "v": t([1, heads, length, v], "bfloat16"),
        },
        {"o": t([1, heads, length, v], "bfloat16")},
        reference,
    )
    pairs = length * (length + 1) // 2 if causal else length * length
    assert result.flops_by_class["matrix"] == {"bfloat16": 2 * heads * pairs * (qk + v)}
