"""`solbench validate` on a suite fails a problem that computes what another one already does."""

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.suite.validate import validate_path

H200 = lookup("H200")

WITH_EPS = """import torch

def run(hidden_states, weight, eps):
    x = hidden_states.float()
    return (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight.float())).to(hidden_states.dtype)
"""
EXTRACTED = """import torch

def run(x, w):
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-06)
    return (h * (w.to(torch.float32) + 1.0)).type_as(x)
"""
PLAIN = """import torch

def run(x, w):
    h = x.to(torch.float32)
    return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-06) * w.to(torch.float32)).type_as(x)
"""


def _norm(root, name, reference, dtype="bfloat16", eps=True, axis="T"):
    inputs = {
        "hidden_states" if eps else "x": {"shape": [axis, "H"], "dtype": dtype},
        "weight" if eps else "w": {"shape": ["H"], "dtype": dtype},
    }
    if eps:
        inputs["eps"] = {"shape": None, "dtype": "float32"}
    definition = {
        "name": name,
        "op_type": "rmsnorm",
        "axes": {axis: {"type": "var"}, "H": {"type": "const", "value": 256}},
        "inputs": inputs,
        "outputs": {"y": {"shape": [axis, "H"], "dtype": dtype}},
        "reference": reference,
    }
    descriptors = {n: ({"type": "scalar", "value": 1e-6} if n == "eps" else {"type": "random"}) for n in inputs}
    workloads = [{"uuid": f"{name}{t}", "axes": {axis: t}, "inputs": descriptors} for t in (4, 64)]
    return write_problem(root / name, definition, workloads)


def _suite(tmp_path, *problems):
    for name, reference, options in problems:
        _norm(tmp_path / "L1", name, reference, **options)
    return {r.name: [f for f in r.findings if f.check == "suite"] for r in validate_path(tmp_path, H200)}


@pytest.mark.slow
def test_the_same_norm_written_twice_is_an_exact_duplicate(tmp_path):
    """Names, input names, axis names and a scalar eps aside, these are one Gemma RMSNorm (1 + weight)."""
    found = _suite(tmp_path, ("a_hand_written", WITH_EPS, {}), ("b_extracted", EXTRACTED, {"eps": False, "axis": "N"}))
    assert found["a_hand_written"] == []
    assert [f.severity for f in found["b_extracted"]] == ["error"]
    assert "computes the same as a_hand_written" in found["b_extracted"][0].message


def test_a_dtype_variant_is_a_near_duplicate_warning_and_a_different_norm_is_none(tmp_path):
    found = _suite(
        tmp_path,
        ("a_bf16", WITH_EPS, {}),
        ("b_fp32", EXTRACTED, {"eps": False, "dtype": "float32"}),
        ("c_plain", PLAIN, {"eps": False}),
    )
    assert [(f.severity, "near duplicate of a_bf16" in f.message) for f in found["b_fp32"]] == [("warning", True)]
    assert found["c_plain"] == []
