"""`solbench validate` catches the classes behind the suite's three wrong references.

Each test builds the old defect as a small problem (and its fix beside it): a top-k over bfloat16
router logits whose ties an expert order decides (Qwen3-30B-A3B MoE), a TP shard that normalises
over its sharded columns (OLMo-2 q/k norm), and one that adds the residual to its partial sum
(Llama-3.2-1B decoder layer "TP=4"). The thread-count class is tests/suite/test_validate.py's.
"""

import pytest

from conftest import VECTOR_ADD, vector_workloads, write_problem
from solbench.hardware import lookup
from solbench.suite.validate import validate_problem

H200 = lookup("H200")

MOE = """import torch

def run(x, router, w_in, w_out):
    logits = {logits}
    top, chosen = torch.topk(torch.softmax(logits.float(), dim=-1), 4, dim=-1)
    top = (top / top.sum(-1, keepdim=True)).to(x.dtype)
    hidden = torch.relu(torch.einsum("th,tkih->tki", x.float(), w_in[chosen].float()))
    out = torch.einsum("tki,tkhi->tkh", hidden, w_out[chosen].float())
    return (out * top.unsqueeze(-1).float()).sum(1).to(x.dtype)
"""
BF16_LOGITS = "(x @ router.T) * 0.125"  # about unit scale, like a trained router's logits
FP32_LOGITS = "(x.float() @ router.float().T) * 0.125"


def _moe(tmp_path, logits: str, tags: list[str], tokens=(8, 1024)):
    definition = {
        "name": "tiny_moe",
        "op_type": "moe",
        "tags": tags,
        "axes": {
            "T": {"type": "var"},
            "H": {"type": "const", "value": 64},
            "E": {"type": "const", "value": 32},
            "I": {"type": "const", "value": 16},
        },
        "inputs": {
            "x": {"shape": ["T", "H"], "dtype": "bfloat16"},
            "router": {"shape": ["E", "H"], "dtype": "bfloat16"},
            "w_in": {"shape": ["E", "I", "H"], "dtype": "bfloat16"},
            "w_out": {"shape": ["E", "H", "I"], "dtype": "bfloat16"},
        },
        "outputs": {"y": {"shape": ["T", "H"], "dtype": "bfloat16"}},
        "reference": MOE.format(logits=logits),
    }
    inputs = {name: {"type": "random"} for name in definition["inputs"]}
    workloads = [{"uuid": f"t{t}", "axes": {"T": t}, "inputs": inputs} for t in tokens]
    return validate_problem(write_problem(tmp_path / "moe", definition, workloads), H200)


def _ties(report, severity="error"):
    return [f for f in report.findings if f.check == "ties" and f.severity == severity]


@pytest.mark.slow
def test_bf16_router_logits_tied_at_the_cut_fail_when_the_experts_are_reversed(tmp_path):
    report = _moe(tmp_path, BF16_LOGITS, ["symmetric:E"])
    assert _ties(report), report.findings
    assert "E axis in reverse order" in _ties(report)[0].message and "t1024" in _ties(report)[0].message


@pytest.mark.slow
def test_float32_router_logits_pass_the_reversed_expert_order(tmp_path):
    report = _moe(tmp_path, FP32_LOGITS, ["symmetric:E"])
    assert not [f for f in report.findings if f.check == "ties"], report.findings


@pytest.mark.slow
def test_an_undeclared_low_precision_top_k_is_found_by_a_one_ulp_move(tmp_path):
    report = _moe(tmp_path, BF16_LOGITS, [], tokens=(512, 1024))  # ties show at the smallest workload
    warnings = _ties(report, "warning")
    assert warnings and "tied at the cut" in warnings[0].message, report.findings
    assert not _ties(report)


@pytest.mark.slow
def test_a_symmetric_tag_naming_no_axis_is_an_error(tmp_path):
    report = _moe(tmp_path, FP32_LOGITS, ["symmetric:experts"])
    assert any("symmetric:experts names no axis" in f.message for f in _ties(report))


SHARD = """import torch

def run(x, wq, wo):
    q = x @ wq.T
{body}
"""
NORM_OVER_SHARD = """    q = q * torch.rsqrt(q.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(q.dtype)
    return q @ wo.T"""
NORM_PER_HEAD = """    heads = q.view(q.shape[0], 4, 8)
    heads = heads * torch.rsqrt(heads.pow(2).mean(-1, keepdim=True) + 1e-6)
    return heads.reshape(q.shape) @ wo.T"""
RESIDUAL_THEN_NORM = """    h = x + q @ wo.T
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)"""
PARTIAL_OUTPUT = """    return q @ wo.T"""


def _shard(tmp_path, body: str, tags=("tp:4",), description="q_size (published / 4: TP=4 shard)"):
    definition = {
        "name": "tiny_shard",
        "op_type": "attention",
        "tags": list(tags),
        "axes": {
            "T": {"type": "var"},
            "H": {"type": "const", "value": 64},
            "Q": {"type": "const", "value": 32, "description": description},
        },
        "inputs": {
            "x": {"shape": ["T", "H"], "dtype": "float32"},
            "wq": {"shape": ["Q", "H"], "dtype": "float32"},
            "wo": {"shape": ["H", "Q"], "dtype": "float32"},
        },
        "outputs": {"y": {"shape": ["T", "H"], "dtype": "float32"}},
        "reference": SHARD.format(body=body),
    }
    inputs = {name: {"type": "random"} for name in definition["inputs"]}
    workloads = [{"uuid": f"t{t}", "axes": {"T": t}, "inputs": inputs} for t in (3, 16)]
    report = validate_problem(write_problem(tmp_path / "shard", definition, workloads), H200)
    return [f for f in report.findings if f.check == "shards"]


def test_a_norm_over_the_sharded_columns_is_caught(tmp_path):
    """OLMo-2's q_norm on one rank's 32 of the projection's columns (TP=4)."""
    found = _shard(tmp_path, NORM_OVER_SHARD)
    assert found and all(f.severity == "error" for f in found)
    assert any("mean reduces over a sharded dim (Q = 32)" in f.message for f in found), found


def test_the_residual_added_to_a_partial_sum_is_caught(tmp_path):
    """The rank's partial o_proj output added to the residual and normalised before the all-reduce."""
    found = _shard(tmp_path, RESIDUAL_THEN_NORM)
    assert any("adds a value every rank holds" in f.message for f in found), found


@pytest.mark.parametrize("body", [NORM_PER_HEAD, PARTIAL_OUTPUT], ids=["norm-per-head", "partial-output"])
def test_real_shards_pass(tmp_path, body):
    assert _shard(tmp_path, body) == []


def test_a_shard_tag_declares_the_axis_without_a_tp_tag(tmp_path):
    assert _shard(tmp_path, NORM_OVER_SHARD, tags=("shard:Q",), description="q columns") != []
    assert _shard(tmp_path, NORM_OVER_SHARD, tags=(), description="q columns") == []


@pytest.mark.parametrize(
    "direction, op_type, wrong",
    [
        ("backward", "mlp", True),
        ("backward", "mlp_backward", False),
        ("forward", "rmsnorm_backward", True),
        ("forward", "mlp", False),
    ],
)
def test_op_type_says_backward_exactly_when_the_pass_is(tmp_path, direction, op_type, wrong):
    definition = {**VECTOR_ADD, "op_type": op_type, "tags": [f"pass:{direction}"]}
    report = validate_problem(write_problem(tmp_path / "p", definition, vector_workloads(64)), H200)
    assert any(f.check == "definition" for f in report.findings) == wrong, report.findings
