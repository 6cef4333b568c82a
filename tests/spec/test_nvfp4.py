"""NVFP4 `_scaled_mm` on the CPU: the emulation equals a direct dequantise-multiply, and references use it."""

import math

import pytest

torch = pytest.importorskip("torch")

from solbench.spec import nvfp4  # noqa: E402 - after the importorskip: it needs torch
from solbench.spec.cpu_reference import EMULATION_NAME, cpu_reference_source, cpu_runnable_source  # noqa: E402 - after the importorskip above

_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def upstream_blocked(scales):
    """SOL-ExecBench's convert_to_blocked_format_for_pytorch_scaled_mm, verbatim in substance."""
    rows, cols = scales.shape
    blocks = scales.view(math.ceil(rows / 128), 128, math.ceil(cols / 4), 4).permute(0, 2, 1, 3)
    return blocks.reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16).flatten()


def direct(codes, scales):
    """float64 value of every element, one nibble at a time from the codes: low nibble first."""
    nibbles = torch.stack([codes & 15, codes >> 4], -1).reshape(codes.shape[0], -1).long()
    magnitude = torch.tensor(_E2M1, dtype=torch.float64)[nibbles & 7]
    sign = torch.where(nibbles >= 8, -1.0, 1.0).double()
    values = (magnitude * sign).reshape(codes.shape[0], -1, 16)
    return (values * scales.double().unsqueeze(-1)).reshape(codes.shape[0], -1)


def random_operands(m, n, k, seed=0):
    generator = torch.Generator().manual_seed(seed)
    codes_a = torch.randint(0, 256, (m, k // 2), generator=generator, dtype=torch.uint8)
    codes_b = torch.randint(0, 256, (n, k // 2), generator=generator, dtype=torch.uint8)
    scale_a = (torch.rand(m, k // 16, generator=generator) * 8 + 2**-6).to(torch.float8_e4m3fn)
    scale_b = (torch.rand(n, k // 16, generator=generator) * 8 + 2**-6).to(torch.float8_e4m3fn)
    return codes_a, codes_b, scale_a, scale_b


def test_blocked_scales_unswizzle_to_the_matrix_upstream_swizzled():
    scales = torch.randint(0, 256, (256, 12), dtype=torch.uint8)
    assert torch.equal(nvfp4.unswizzle_scales(upstream_blocked(scales), 256, 12), scales)


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_emulation_equals_direct_dequantise_multiply(out_dtype):
    m, n, k = 128, 128, 256
    codes_a, codes_b, scale_a, scale_b = random_operands(m, n, k)
    a = codes_a.view(torch.float4_e2m1fn_x2)
    b = codes_b.view(torch.float4_e2m1fn_x2)
    # called as upstream calls torch._scaled_mm: B as a transposed (N, K/2) view, scales blocked
    out = nvfp4.scaled_mm(
        a, b.t(), upstream_blocked(scale_a), upstream_blocked(scale_b), bias=None, out_dtype=out_dtype
    )
    expected = direct(codes_a, scale_a) @ direct(codes_b, scale_b).T
    assert out.dtype == out_dtype and out.shape == (m, n)
    if out_dtype == torch.float64:
        assert torch.equal(out, expected)  # every product is exact; fp64 sums of them are too here
    elif out_dtype == torch.float32:
        assert torch.allclose(out.double(), expected, rtol=1e-6, atol=1e-6 * expected.abs().max().item())
    else:  # one rounding to bf16 of the fp32 sum
        assert (
            torch.equal(out, expected.float().to(torch.bfloat16))
            or (out.double() - expected).abs().max() <= 2**-7 * expected.abs().max()
        )


def test_other_calls_go_to_torch_unchanged():
    a = torch.randn(16, 32).to(torch.float8_e4m3fn)
    b = torch.randn(32, 16).to(torch.float8_e4m3fn).t().contiguous().t()
    one = torch.tensor(1.0)
    assert torch.equal(
        nvfp4.scaled_mm(a, b, one, one, out_dtype=torch.float32),
        torch._scaled_mm(a, b, one, one, out_dtype=torch.float32),
    )


def test_torch_on_this_cpu_refuses_what_the_emulation_computes():
    codes_a, codes_b, scale_a, scale_b = random_operands(128, 128, 64)
    args = (
        codes_a.view(torch.float4_e2m1fn_x2),
        codes_b.view(torch.float4_e2m1fn_x2).t(),
        upstream_blocked(scale_a),
        upstream_blocked(scale_b),
    )
    try:
        torch._scaled_mm(*args, out_dtype=torch.bfloat16)
    except (RuntimeError, ValueError):  # "Invalid scaling configuration" on this CPU build
        pass  # (a build that computes it is fine too); the emulation must answer either way
    assert nvfp4.scaled_mm(*args, out_dtype=torch.bfloat16).shape == (128, 128)


def test_reference_source_is_rewritten_not_torch():
    source = (
        "from __future__ import annotations\nimport torch\n"
        "def run(a, b, sa, sb):\n    d = torch.device('cuda')\n"
        "    return torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)\n"
    )
    trusted = cpu_runnable_source(source)
    assert trusted.startswith("from __future__ import annotations\nfrom solbench.spec.nvfp4 import scaled_mm as ")
    assert f"return {EMULATION_NAME}(a, b" in trusted and "'cpu'" in trusted and "torch._scaled_mm" not in trusted
    assert (
        cpu_runnable_source("import torch\ndef run(x):\n    return x\n") == "import torch\ndef run(x):\n    return x\n"
    )
    assert "_scaled_mm" in cpu_reference_source(source)  # the analyzer's rewrite keeps the op it counts
    assert torch._scaled_mm.__module__ != nvfp4.__name__  # torch itself untouched


def test_cpu_reference_solution_ships_the_emulation_explicitly():
    from solbench.guard import blocking, check_solution
    from solbench.spec import Definition, compiled_reference_solution, reference_solution

    definition = Definition.model_validate(
        {
            "name": "fp4_mm",
            "axes": {"M": {"type": "var"}},
            "inputs": {"a": {"shape": ["M"], "dtype": "float32"}},
            "outputs": {"c": {"shape": ["M"], "dtype": "float32"}},
            "reference": "import torch\ndef run(a):\n    return torch._scaled_mm(a, a, a, a)\n",
        }
    )
    on_gpu = reference_solution(definition, "cuda")
    on_cpu = reference_solution(definition, "cpu")
    assert [s.path for s in on_gpu.sources] == ["reference.py"]
    assert [s.path for s in on_cpu.sources] == ["reference.py", "nvfp4_emulation.py"]
    assert on_cpu.sources[0].content.startswith("from nvfp4_emulation import scaled_mm as ")
    assert not blocking(check_solution(on_cpu))  # the static rules accept it: no patching, no harness import
    compiled = compiled_reference_solution(definition, "reduce-overhead", "cpu")  # the torch.compile baseline too
    assert [s.path for s in compiled.sources] == ["reference.py", "nvfp4_emulation.py"]
    assert compiled.sources[0].content.startswith("from nvfp4_emulation import scaled_mm as ")
    assert "_torch.compile(_eager_run, mode='reduce-overhead')" in compiled.sources[0].content


def test_a_compared_device_literal_stays_and_a_parenthesised_future_import_stays_whole():
    """`x.device.type == "cuda"` guards a GPU-only branch: rewriting it would take that branch on the CPU. The
    emulation's import goes after a `from __future__ import (...)` spanning lines, not inside it."""
    source = (
        "from __future__ import (annotations,\n    division)\nimport torch\n\ndef run(a, b, s, t):\n"
        '    if a.device.type == "cuda" or "cuda" != str(a.device):\n        a = a.to("cuda")\n'
        "    return torch._scaled_mm(a, b, s, t)\n"
    )
    rewritten = cpu_runnable_source(source)
    compile(rewritten, "reference", "exec")
    assert 'a.device.type == "cuda" or "cuda" != str(a.device)' in rewritten and 'a.to("cpu")' in rewritten
    assert rewritten.index(EMULATION_NAME) > rewritten.index("division)")
