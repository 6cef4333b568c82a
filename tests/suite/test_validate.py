"""`solbench validate` catches the problems that measure nothing, and passes sound ones."""

import json
import subprocess
import sys

import pytest

from conftest import VECTOR_ADD, vector_workloads, write_problem
from solbench.hardware import lookup
from solbench.suite.validate import validate_path, validate_problem

H200 = lookup("H200")


def _findings(report):
    return {(f.check, f.severity) for f in report.findings}


def test_a_sound_problem_passes(vector_add_problem):
    report = validate_problem(vector_add_problem, H200)
    assert report.ok, report.findings
    assert report.workloads == 2 and len(report.t_sol_ms) == 2 and all(t > 0 for t in report.t_sol_ms)
    assert report.reference_ms is not None


def test_softmax_over_a_wide_row_fails_because_zeros_pass(tmp_path):
    """Each probability is ~1/4096, below atol 1e-2: an all-zero output would pass (a known loophole)."""
    definition = {
        "name": "wide_softmax",
        "axes": {"B": {"type": "var"}, "H": {"type": "const", "value": 4096}},
        "inputs": {"x": {"shape": ["B", "H"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["B", "H"], "dtype": "float32"}},
        "reference": "import torch\n\ndef run(x):\n    return torch.softmax(x, dim=-1)\n",
    }
    folder = write_problem(
        tmp_path / "p", definition, [{"uuid": "a", "axes": {"B": 4}, "inputs": {"x": {"type": "random"}}}]
    )
    report = validate_problem(folder, H200)
    assert not report.ok
    assert any(f.check == "degenerate" and "zeros" in f.message for f in report.findings)


def test_an_ignored_input_and_an_input_independent_output_are_caught(tmp_path):
    ignores_y = {**VECTOR_ADD, "name": "ignores_y", "reference": "import torch\n\ndef run(x, y):\n    return x * 2\n"}
    report = validate_problem(write_problem(tmp_path / "a", ignores_y, vector_workloads(100)), H200)
    assert ("sensitivity", "error") in _findings(report) and "'y'" in report.findings[0].message

    constant = {
        **VECTOR_ADD,
        "name": "constant",
        "reference": "import torch\n\ndef run(x, y):\n    return torch.ones_like(x) * 3 + 0 * (x + y)\n",
    }
    report = validate_problem(write_problem(tmp_path / "b", constant, vector_workloads(100)), H200)
    assert any(f.check == "degenerate" and "constant" in f.message for f in report.findings)


def test_masked_positions_do_not_make_zeros_or_a_constant_pass(tmp_path):
    """Validate judges by the evaluator's tolerance rule (evaluation/correctness.py): a finite value never matches a
    -inf, so zeros, a constant or another input's output cannot pass through the masked positions of a causal
    score row (255 of 256 -inf), and the -inf that both sides hold are left out of the matched ratio."""
    definition = {
        "name": "masked_scores",
        "axes": {"B": {"type": "var"}, "H": {"type": "const", "value": 256}},
        "inputs": {"x": {"shape": ["B", "H"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["B", "H"], "dtype": "float32"}},
        "reference": "import torch\n\ndef run(x):\n"
        "    return x.masked_fill(torch.arange(x.shape[-1]) > 0, float('-inf'))\n",
    }
    workload = {
        "uuid": "a",
        "axes": {"B": 64},
        "inputs": {"x": {"type": "random"}},
        "tolerance": {"allow_negative_inf": True},
    }
    report = validate_problem(write_problem(tmp_path / "p", definition, [workload]), H200)
    assert not [f for f in report.findings if f.check in ("degenerate", "reference", "sensitivity")], report.findings


def test_duplicate_workloads_and_uncovered_ops_are_reported(tmp_path):
    workloads = vector_workloads(100) + [{**vector_workloads(100)[0], "uuid": "again"}]
    report = validate_problem(write_problem(tmp_path / "dup", VECTOR_ADD, workloads), H200)
    assert any(f.check == "workloads" and "duplicates" in f.message for f in report.findings)

    uncovered = {
        "name": "uncovered",
        "axes": {"N": {"type": "const", "value": 32}},
        "inputs": {"x": {"shape": ["N", "N"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["N", "N"], "dtype": "float32"}},
        "reference": "import torch\n\ndef run(x):\n    return torch.linalg.inv(x + 32 * torch.eye(32))\n",
    }
    report = validate_problem(
        write_problem(tmp_path / "unc", uncovered, [{"uuid": "w", "axes": {}, "inputs": {"x": {"type": "random"}}}]),
        H200,
    )
    assert any(f.check == "sol" and "coverage" in f.message for f in report.findings), report.findings


def test_a_reference_that_raises_and_a_bad_definition_are_reported(tmp_path):
    raising = {
        **VECTOR_ADD,
        "name": "raising",
        "reference": "import torch\n\ndef run(x, y):\n    raise ValueError('no')\n",
    }
    report = validate_problem(write_problem(tmp_path / "r", raising, vector_workloads(8)), H200)
    assert any(f.check == "reference" and "ValueError" in f.message for f in report.findings)
    broken = write_problem(tmp_path / "b", {**VECTOR_ADD, "outputs": {}}, vector_workloads(8))
    report = validate_problem(broken, H200)
    assert [f.check for f in report.findings] == ["load"] and "definition.json" in report.findings[0].message


def test_a_suite_reports_names_used_twice(tmp_path):
    write_problem(tmp_path / "L1" / "one", VECTOR_ADD, vector_workloads(8))
    write_problem(tmp_path / "L1" / "two", VECTOR_ADD, vector_workloads(16))
    reports = validate_path(tmp_path, H200)
    assert len(reports) == 2 and any(f.check == "suite" for f in reports[1].findings)


@pytest.mark.slow
def test_the_cli_exits_1_on_findings_and_0_when_clean(tmp_path, vector_add_problem):
    ok = subprocess.run(
        [sys.executable, "-m", "solbench", "validate", str(vector_add_problem), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout.splitlines()[0])["ok"] is True
    bad = write_problem(
        tmp_path / "bad",
        {**VECTOR_ADD, "reference": "import torch\n\ndef run(x, y):\n    return x\n"},
        vector_workloads(8),
    )
    failed = subprocess.run(
        [sys.executable, "-m", "solbench", "validate", str(bad)], capture_output=True, text=True, timeout=300
    )
    assert failed.returncode == 1 and "no output depends on input 'y'" in failed.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "solbench", "validate", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


@pytest.mark.upstream
def test_upstream_softmax_is_flagged_degenerate():
    """SOL-ExecBench's own softmax sample passes an all-zero output under its atol: validate says so."""
    from conftest import UPSTREAM

    report = validate_problem(UPSTREAM / "softmax", H200)
    assert any(f.check == "degenerate" for f in report.findings)


LAYER_NORM_PARAMETER_GRADS = """import torch
import torch.nn.functional as F

def run(x, weight, bias, grad_output):
    compute = {compute}
    params = [t.detach().to(compute).requires_grad_() for t in (weight, bias)]
    with torch.enable_grad():
        out = F.layer_norm(x.to(compute), (x.shape[-1],), *params)
        grads = torch.autograd.grad(out, params, grad_output.to(compute))
    return tuple(g.to(x.dtype) for g in grads)
"""


@pytest.mark.parametrize(
    "compute, sound", [("x.dtype", False), ("torch.float32", True)], ids=["bf16-sums", "fp32-sums"]
)
def test_a_reference_whose_sums_depend_on_the_thread_count_is_caught(tmp_path, compute, sound):
    """bf16 LayerNorm parameter gradients sum over tokens in an order set by the thread split."""
    definition = {
        "name": "ln_param_grads",
        "axes": {"T": {"type": "var"}, "H": {"type": "const", "value": 768}},
        "inputs": {
            name: {"shape": shape, "dtype": "bfloat16"}
            for name, shape in (("x", ["T", "H"]), ("weight", ["H"]), ("bias", ["H"]), ("grad_output", ["T", "H"]))
        },
        "outputs": {
            "grad_weight": {"shape": ["H"], "dtype": "bfloat16"},
            "grad_bias": {"shape": ["H"], "dtype": "bfloat16"},
        },
        "reference": LAYER_NORM_PARAMETER_GRADS.format(compute=compute),
    }
    inputs = {name: {"type": "random"} for name in definition["inputs"]}
    folder = write_problem(tmp_path / "ln", definition, [{"uuid": "t512", "axes": {"T": 512}, "inputs": inputs}])
    report = validate_problem(folder, H200)
    by_threads = [f for f in report.findings if f.check == "ill-conditioned" and "CPU thread" in f.message]
    assert (not by_threads) == sound, report.findings
    if not sound:
        assert by_threads[0].severity == "error" and "grad_" in by_threads[0].message
        assert "of elements within atol=" in by_threads[0].message  # the evidence, measured
