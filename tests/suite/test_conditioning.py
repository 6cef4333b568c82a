"""`solbench validate` reports ill-conditioned outputs with the evidence: the reference against the float64 result
(a kernel more accurate than the reference would fail) and outputs that are rounding noise."""

from conftest import write_problem
from solbench.hardware import lookup
from solbench.suite.validate import validate_problem

H200 = lookup("H200")


def _problem(tmp_path, name: str, reference: str, tolerance: dict | None = None):
    definition = {
        "name": name,
        "axes": {"T": {"type": "var"}, "H": {"type": "const", "value": 64}},
        "inputs": {"x": {"shape": ["T", "H"], "dtype": "bfloat16"}},
        "outputs": {"y": {"shape": ["H"], "dtype": "bfloat16"}},
        "reference": reference,
    }
    workload = {"uuid": "t512", "axes": {"T": 512}, "inputs": {"x": {"type": "random"}}}
    if tolerance:
        workload["tolerance"] = tolerance
    return validate_problem(write_problem(tmp_path / name, definition, [workload]), H200)


def _ill_conditioned(report):
    return [f for f in report.findings if f.check == "ill-conditioned"]


SEQUENTIAL_BF16_SUM = """import torch

def run(x):
    total = x[0]
    for row in x[1:]:
        total = total + row  # rounded to bf16 at every step
    return total
"""


def test_a_reference_less_accurate_than_its_tolerance_is_reported_with_the_evidence(tmp_path):
    tight = {"max_atol": 1e-3, "max_rtol": 1e-3}
    findings = _ill_conditioned(_problem(tmp_path, "bf16_running_sum", SEQUENTIAL_BF16_SUM, tight))
    golden = [f for f in findings if "float64 result rounded to bfloat16" in f.message]
    assert golden and golden[0].severity == "warning", findings
    assert "of elements within atol=0.001" in golden[0].message and "more accurate" in golden[0].message
    float32_sum = "import torch\n\ndef run(x):\n    return x.float().sum(0).to(x.dtype)\n"
    assert not _ill_conditioned(_problem(tmp_path, "fp32_sum", float32_sum, tight))


CENTERED_SUM = """import torch

def run(x):
    return (x - x.mean(0, keepdim=True)).sum(0)  # zero in exact arithmetic
"""


def test_an_output_that_is_rounding_noise_is_reported_as_judged_by_atol(tmp_path):
    findings = _ill_conditioned(_problem(tmp_path, "centered_sum", CENTERED_SUM))
    noise = [f for f in findings if "relative-norm rule's" in f.message]
    assert noise and noise[0].severity == "warning" and "as upstream judges it" in noise[0].message, findings
