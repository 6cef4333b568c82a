"""Mixture of experts: compulsory bytes count the weights of the experts some token routes to, not all.

The routing below is fixed by the generator (token j prefers experts j mod E and j+1 mod E), so the
experts used are known by hand; only the activations are random.
"""

import shutil

import pytest

from conftest import write_problem
from solbench.hardware.spec import HardwareSpec
from solbench.sol import AnalysisError, analyze_problem
from solbench.sol.analysis import INPUT_DRAWS
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis
from solbench.spec.reference_code import import_reference

TOY = HardwareSpec(
    id="toy",
    name="toy",
    kind="gpu",
    memory_bandwidth_bytes_per_s=1e12,
    tensor_flops={"bfloat16": 100e12, "float16": 100e12, "tf32": 30e12},
    vector_flops={"float32": 10e12, "float64": 5e12},
    special_ops_per_s=1e12,
)
EXPERTS, HIDDEN, INTER = 8, 64, 32
EXPERT_BYTES = 2 * INTER * HIDDEN * 2  # w_up[e] and w_down[e], bf16

LOOP_MOE = """
import torch
import torch.nn.functional as F


def make_inputs(axes, device):
    tokens, experts = axes["tokens"], axes["experts"]
    rows = torch.arange(tokens)
    logits = torch.zeros(tokens, experts)
    logits[rows, rows % experts] = 2.0
    logits[rows, (rows + 1) % experts] = 1.0
    return {"x": torch.randn(tokens, axes["hidden"]).to(torch.bfloat16), "router_logits": logits,
            "w_up": torch.randn(experts, axes["inter"], axes["hidden"]).to(torch.bfloat16),
            "w_down": torch.randn(experts, axes["hidden"], axes["inter"]).to(torch.bfloat16)}


def run(x, router_logits, w_up, w_down):
    weights, experts = torch.topk(torch.softmax(router_logits, dim=-1), 2, dim=-1)
    out = torch.zeros(x.shape, dtype=torch.float32)
    for e in range(w_up.shape[0]):
        token, slot = torch.where(experts == e)
        h = F.silu(F.linear(x[token], w_up[e]))
        out.index_add_(0, token, F.linear(h, w_down[e]).float() * weights[token, slot, None])
    return out.to(x.dtype)
"""


def moe_problem(tmp_path, reference: str, inputs: dict, outputs: dict, axes: dict, workloads: list[dict]):
    definition = {
        "name": "moe",
        "axes": axes,
        "inputs": inputs,
        "outputs": outputs,
        "reference": reference,
        "custom_inputs_entrypoint": "make_inputs",
    }
    workloads = [
        {"uuid": f"w{i}", "axes": w, "inputs": {name: {"type": "custom"} for name in inputs}}
        for i, w in enumerate(workloads)
    ]
    return load_problem(write_problem(tmp_path / "moe", definition, workloads))


def loop_moe(tmp_path, *token_counts: int):
    axes = {
        "tokens": {"type": "var"},
        "experts": {"type": "const", "value": EXPERTS},
        "hidden": {"type": "const", "value": HIDDEN},
        "inter": {"type": "const", "value": INTER},
    }
    inputs = {
        "x": {"shape": ["tokens", "hidden"], "dtype": "bfloat16"},
        "router_logits": {"shape": ["tokens", "experts"], "dtype": "float32"},
        "w_up": {"shape": ["experts", "inter", "hidden"], "dtype": "bfloat16"},
        "w_down": {"shape": ["experts", "hidden", "inter"], "dtype": "bfloat16"},
    }
    outputs = {"y": {"shape": ["tokens", "hidden"], "dtype": "bfloat16"}}
    return moe_problem(tmp_path, LOOP_MOE, inputs, outputs, axes, [{"tokens": n} for n in token_counts])


def activation_bytes(tokens: int) -> int:
    """x read, router logits read, y written."""
    return tokens * HIDDEN * 2 + tokens * EXPERTS * 4 + tokens * HIDDEN * 2


def test_one_token_charges_only_the_two_experts_it_routes_to(tmp_path):
    [result] = analyze_problem(loop_moe(tmp_path, 1), TOY, make_inputs=inputs_for_analysis)
    assert result.bytes == activation_bytes(1) + 2 * EXPERT_BYTES == 16672
    assert result.bound == "memory" and result.t_sol_ms == pytest.approx(16672 / 1e12 * 1e3)


def test_three_tokens_charge_the_four_experts_they_share(tmp_path):
    """Tokens 0, 1, 2 route to experts {0, 1}, {1, 2}, {2, 3}: four distinct experts, not six."""
    [result] = analyze_problem(loop_moe(tmp_path, 3), TOY, make_inputs=inputs_for_analysis)
    assert result.bytes == activation_bytes(3) + 4 * EXPERT_BYTES


def test_as_many_tokens_as_experts_charge_every_expert(tmp_path):
    [result] = analyze_problem(loop_moe(tmp_path, 16), TOY, make_inputs=inputs_for_analysis)
    assert result.bytes == activation_bytes(16) + EXPERTS * EXPERT_BYTES


GROUPED_MOE = """
import torch


def make_inputs(axes, device):
    return {"x": torch.randn(axes["rows"], axes["k"]).to(torch.bfloat16),
            "w": torch.randn(axes["experts"], axes["k"], axes["n"]).to(torch.bfloat16),
            "offsets": torch.tensor([10, 40, 40, 96], dtype=torch.int32)}


def run(x, w, offsets):
    return torch._grouped_mm(x, w, offs=offsets)
"""


def grouped_moe(tmp_path):
    axes = {
        "rows": {"type": "const", "value": 96},
        "experts": {"type": "const", "value": 4},
        "k": {"type": "const", "value": 64},
        "n": {"type": "const", "value": 32},
    }
    inputs = {
        "x": {"shape": ["rows", "k"], "dtype": "bfloat16"},
        "w": {"shape": ["experts", "k", "n"], "dtype": "bfloat16"},
        "offsets": {"shape": ["experts"], "dtype": "int32"},
    }
    outputs = {"y": {"shape": ["rows", "n"], "dtype": "bfloat16"}}
    return moe_problem(tmp_path, GROUPED_MOE, inputs, outputs, axes, [{}])


def test_grouped_mm_counts_each_row_once_and_only_the_groups_that_own_rows(tmp_path):
    """96 routed rows split 10 / 30 / 0 / 56: expert 2 owns no row, so its weights are not read."""
    [result] = analyze_problem(grouped_moe(tmp_path), TOY, make_inputs=inputs_for_analysis)
    assert result.flops_by_class["matrix"] == {"bfloat16": 2 * 96 * 64 * 32}
    assert result.bytes == 96 * 64 * 2 + 3 * 64 * 32 * 2 + 4 * 4 + 96 * 32 * 2
    assert "ValuesNeeded" in result.coverage.execution


def test_grouped_mm_without_input_values_cannot_be_analysed(tmp_path):
    with pytest.raises(AnalysisError, match="values of its offsets"):
        analyze_problem(grouped_moe(tmp_path), TOY)


RAGGED = """
import torch


def make_inputs(axes, device):
    return {"x": torch.randn(axes["rows"], 256), "count": torch.randint(1, axes["rows"] + 1, (1,))}


def run(x, count):
    return x[: int(count.item())].sum(0)
"""


def test_value_dependent_work_takes_the_least_of_several_draws(tmp_path):
    """The evaluator's inputs come from a secret seed: T_SOL is the least over the analysed draws."""
    axes = {
        "rows": {"type": "const", "value": 1000},
        "width": {"type": "const", "value": 256},
        "one": {"type": "const", "value": 1},
    }
    problem = moe_problem(
        tmp_path,
        RAGGED,
        {"x": {"shape": ["rows", "width"], "dtype": "float32"}, "count": {"shape": ["one"], "dtype": "int64"}},
        {"s": {"shape": ["width"], "dtype": "float32"}},
        axes,
        [{}],
    )
    [result] = analyze_problem(problem, TOY, make_inputs=inputs_for_analysis)
    module, folder = import_reference(problem.definition, "cpu")
    try:
        counts = [
            int(inputs_for_analysis(problem, problem.workloads[0], module, draw=d)[1]) for d in range(INPUT_DRAWS)
        ]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert len(set(counts)) > 1 and f"least of {INPUT_DRAWS} input draws" in result.coverage.execution
    assert result.bytes == min(counts) * 256 * 4 + 8 + 256 * 4
    [single] = analyze_problem(problem, TOY, make_inputs=inputs_for_analysis, draws=1)
    assert single.bytes == counts[0] * 256 * 4 + 8 + 256 * 4 and "one input draw" in single.coverage.execution
