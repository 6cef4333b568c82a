"""`solbench validate` names GPU-tier workloads whose float64 golden run would not fit a GPU (attention scores at
native video sizes), from the shape-only analysis, without a GPU."""

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import analyze_problem
from solbench.spec import load_problem
from solbench.spec.tiers import CPU_WORKLOAD_FILE
from solbench.suite.golden_memory import GOLDEN_MEMORY_LIMIT, golden_run_bytes
from solbench.suite.validate import ProblemValidation, _check_golden_memory

ATTENTION = {
    "name": "attention",
    "axes": {
        "batch": {"type": "var"},
        "tokens": {"type": "var"},
        "heads": {"type": "const", "value": 16},
        "head_dim": {"type": "const", "value": 64},
    },
    "inputs": {name: {"shape": ["batch", "heads", "tokens", "head_dim"], "dtype": "bfloat16"} for name in "qkv"},
    "outputs": {"o": {"shape": ["batch", "heads", "tokens", "head_dim"], "dtype": "bfloat16"}},
    "reference": "import torch\n\ndef run(q, k, v):\n    return "
    "torch.nn.functional.scaled_dot_product_attention(q, k, v)\n",
}


def _workload(uuid, batch, tokens):
    return {"uuid": uuid, "axes": {"batch": batch, "tokens": tokens}, "inputs": {n: {"type": "random"} for n in "qkv"}}


@pytest.mark.slow  # the shape-only analysis of three workloads: about 9 s on the loaded machine
def test_attention_scores_of_a_gpu_tier_workload_are_counted_and_reported(tmp_path):
    import json

    folder = write_problem(
        tmp_path / "attention", ATTENTION, [_workload("small", 1, 1024), _workload("clip", 1, 32760)]
    )
    (folder / CPU_WORKLOAD_FILE).write_text(json.dumps(_workload("cpu", 1, 32760 // 8)) + "\n")
    problem = load_problem(folder, "all")
    results = analyze_problem(problem, lookup("B200_1500MHz"), explain=True)
    small, clip, cpu = (golden_run_bytes(problem, w, r.ops) for w, r in zip(problem.workloads, results))
    assert small == (4 * 16 * 1024 * 64 * 8, 2 * 16 * 1024 * 1024 * 8)
    assert clip[1] == 2 * 16 * 32760 * 32760 * 8 > GOLDEN_MEMORY_LIMIT  # 275 GB of float64 scores and softmax
    report = ProblemValidation(path=str(folder), name="attention")
    _check_golden_memory(problem, results, report)
    [finding] = report.findings
    assert finding.severity == "warning" and "1 GPU-tier workload(s)" in finding.message and "clip" in finding.message
    assert report.ok  # the evaluator copes (a float32 golden result); validate says so, it does not fail
