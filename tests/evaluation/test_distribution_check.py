"""Outputs that are samples (issue 30 item 4): judged by the distribution of many draws through a real sandbox. A
correct sampler that draws with other random numbers than the reference passes; a biased one fails."""

import math

import pytest

from conftest import make_solution, write_problem
from solbench.evaluation import evaluate
from solbench.evaluation.sample_distance import distance_bound, row_distance
from solbench.spec import SpecError, load_problem
from solbench.spec.trace import EvaluationStatus as S

SAMPLER = {
    "name": "sampler",
    "op_type": "sampling",
    "axes": {"batch": {"type": "var"}, "vocab": {"type": "const", "value": 5}},
    "inputs": {
        "probs": {"shape": ["batch", "vocab"], "dtype": "float32"},
        "uniform": {"shape": ["batch"], "dtype": "float32"},
    },
    "outputs": {"samples": {"shape": ["batch"], "dtype": "int64"}},
    "reference": (
        "import torch\n\n"
        "def run(probs, uniform):\n"
        "    cdf = torch.cumsum(probs, dim=-1)\n"
        "    return (cdf <= uniform.unsqueeze(-1) * cdf[:, -1:]).sum(-1).clamp(max=probs.shape[-1] - 1)\n\n"
        "def make_inputs(axes, device):\n"
        "    base = torch.tensor([0.35, 0.25, 0.2, 0.12, 0.08])\n"
        "    rows = torch.stack([base[torch.randperm(5)] for _ in range(axes['batch'])])\n"
        "    return {'probs': rows.to(device), 'uniform': torch.rand(axes['batch']).to(device)}\n"
    ),
    "custom_inputs_entrypoint": "make_inputs",
}
CHECK = {"kind": "distribution", "draws": 20000, "draw_axis": "batch", "random_inputs": ["uniform"], "rows": 2}
CUSTOM = {"probs": {"type": "custom"}, "uniform": {"type": "custom"}}


def _problem(tmp_path, check=CHECK, field="tolerance"):
    workload = {"uuid": "b3", "axes": {"batch": 3}, "inputs": CUSTOM}
    if check is not None:
        workload[field] = {"max_atol": 0, "max_rtol": 0, "required_matched_ratio": 1, "distribution": check}
    return write_problem(tmp_path / "sampler", SAMPLER, [workload])


def _trace(problem_dir, body, config):
    source = "import torch\n\ndef run(probs, uniform):\n" + body
    [trace] = evaluate(load_problem(problem_dir), make_solution(source, definition="sampler"), config)
    return trace


FAIR_BY_MULTINOMIAL = "    return torch.multinomial(probs, 1).squeeze(-1)\n"  # its own random numbers, not `uniform`
FAIR_BY_SORTED_CDF = (  # the given uniform, but by inverse CDF over the most likely token first
    "    p, order = torch.sort(probs, dim=-1, descending=True)\n"
    "    cdf = torch.cumsum(p, dim=-1)\n"
    "    pick = (cdf <= uniform.unsqueeze(-1) * cdf[:, -1:]).sum(-1, keepdim=True).clamp(max=probs.shape[-1] - 1)\n"
    "    return order.gather(-1, pick).squeeze(-1)\n"
)
DROPS_LEAST_LIKELY = (  # the 8% token is never drawn: distance 0.08
    "    kept = probs.masked_fill(probs == probs.amin(-1, keepdim=True), 0)\n"
    "    return torch.multinomial(kept, 1).squeeze(-1)\n"
)
SHARPENED = "    return torch.multinomial(probs ** 1.5, 1).squeeze(-1)\n"  # skewed toward likely tokens: distance 0.08
ARGMAX = "    return probs.argmax(-1)\n"


@pytest.mark.parametrize(
    "body",
    [FAIR_BY_MULTINOMIAL, pytest.param(FAIR_BY_SORTED_CDF, marks=pytest.mark.slow)],
    ids=["multinomial", "sorted_cdf"],
)
def test_a_correct_sampler_that_draws_differently_passes(tmp_path, fast_config, body):
    trace = _trace(_problem(tmp_path), body, fast_config)
    assert trace.evaluation.status == S.PASSED, trace.evaluation.log
    [check] = [c for c in trace.evaluation.solbench.checks if c.rule == "distribution"]
    assert check.passed and check.value <= check.limit < 0.05
    assert "20000 draws" in check.detail


@pytest.mark.slow
def test_without_the_declaration_the_same_sampler_fails_elementwise(tmp_path, fast_config):
    trace = _trace(_problem(tmp_path, check=None), FAIR_BY_MULTINOMIAL, fast_config)
    assert trace.evaluation.status == S.INCORRECT_NUMERICAL


@pytest.mark.parametrize(
    "body",
    [DROPS_LEAST_LIKELY, pytest.param(SHARPENED, marks=pytest.mark.slow), pytest.param(ARGMAX, marks=pytest.mark.slow)],
    ids=["drops_least_likely", "sharpened", "argmax"],
)
def test_a_biased_sampler_fails_with_the_distance_the_bound_and_the_row(tmp_path, fast_config, body):
    trace = _trace(_problem(tmp_path), body, fast_config)
    details = trace.evaluation.solbench
    assert trace.evaluation.status == S.INCORRECT_NUMERICAL
    assert details.failed_rule == "distribution"
    assert "above the bound" in details.failure and "20000 draws" in details.failure and "at row" in details.failure


@pytest.mark.slow
def test_the_older_correctness_field_declares_it_too(tmp_path, fast_config):
    trace = _trace(_problem(tmp_path, field="correctness"), ARGMAX, fast_config)
    assert trace.evaluation.solbench.failed_rule == "distribution"


@pytest.mark.slow
def test_a_sampler_that_returns_the_wrong_shape_on_the_draws_fails_on_shape(tmp_path, fast_config):
    body = "    out = torch.multinomial(probs, 1).squeeze(-1)\n    return out if len(out) == 3 else out[:1]\n"
    trace = _trace(_problem(tmp_path), body, fast_config)
    assert trace.evaluation.status == S.INCORRECT_SHAPE


@pytest.mark.slow
def test_a_sampler_that_writes_to_its_fresh_random_numbers_is_refused(tmp_path, fast_config):
    body = "    if len(uniform) != 3:\n        uniform.zero_()\n" + FAIR_BY_MULTINOMIAL  # on the draws only
    trace = _trace(_problem(tmp_path), body, fast_config)
    assert trace.evaluation.status == S.REWARD_HACK and trace.evaluation.solbench.failed_rule == "input_mutation"


@pytest.mark.parametrize(
    "change, field, reason",
    [
        ({"random_inputs": ["u"]}, "tolerance.distribution.random_inputs[0]", "'u' is not an input of sampler"),
        ({"draw_axis": "vocab"}, "tolerance.distribution.draw_axis", "does not lead with 'vocab'"),
        ({"draw_axis": "rows"}, "tolerance.distribution.draw_axis", "'rows' is not an axis"),
        ({"random_inputs": ["probs", "probs"]}, "tolerance.distribution.random_inputs", "named twice"),
        ({"draws": 5}, "tolerance.distribution.draws", "greater than or equal to 20"),
        ({"max_tvd": 0.1}, "tolerance.distribution.max_tvd", "Extra inputs are not permitted"),
        ({"metric": "kl"}, "tolerance.distribution.metric", "'total_variation'"),
    ],
)
def test_a_bad_declaration_names_the_file_and_the_field(tmp_path, change, field, reason):
    with pytest.raises(SpecError) as caught:
        load_problem(_problem(tmp_path, check={**CHECK, **change}))
    assert caught.value.field == field and caught.value.line == 1
    assert str(caught.value).startswith(f"{tmp_path / 'sampler' / 'workload.jsonl'}:1: {field}: ")
    assert reason in str(caught.value)


def test_a_random_input_without_the_draw_axis_is_refused(tmp_path):
    definition = {**SAMPLER, "inputs": {**SAMPLER["inputs"], "uniform": {"shape": None, "dtype": "float32"}}}
    workload = {"uuid": "b3", "axes": {"batch": 3}, "inputs": CUSTOM, "tolerance": {"distribution": CHECK}}
    with pytest.raises(SpecError, match="has no 'batch' axis: the rows would share it"):
        load_problem(write_problem(tmp_path / "sampler", definition, [workload]))


# --- the bound and the distance --------------------------------------------------------------------------------


def test_the_bound_is_the_two_sample_bretagnolle_huber_carol_radius():
    assert distance_bound(1000, 8, 4, 1e-6) == pytest.approx(math.sqrt((math.log(254) + math.log(4e6)) / 1000))
    assert distance_bound(4000, 8, 4, 1e-6) == pytest.approx(distance_bound(1000, 8, 4, 1e-6) / 2)
    assert distance_bound(1000, 16, 4, 1e-6) > distance_bound(1000, 8, 4, 1e-6) > distance_bound(1000, 8, 1, 1e-3)
    with pytest.raises(ValueError):
        distance_bound(1000, 1, 4, 1e-6)


def test_two_correct_samples_stay_under_the_bound_at_least_as_often_as_promised():
    import torch

    generator = torch.Generator().manual_seed(0)
    p = torch.tensor([0.4, 0.3, 0.2, 0.1])

    def draws(n):
        return torch.multinomial(p, n, replacement=True, generator=generator).double().unsqueeze(-1)

    above = 0
    for _ in range(400):
        distance, cells = row_distance(draws(50), draws(200), draws(200), max_cells=8)
        above += distance > distance_bound(200, cells, 1, 0.2)
    assert cells == 5 and above <= 0.2 * 400 / 2  # far below the promise: the bound is conservative


def test_the_distance_over_the_pilot_cells():
    import torch

    def column(*values):
        return torch.tensor(values, dtype=torch.float64).unsqueeze(-1)

    same = column(0, 1, 2, 3)
    assert row_distance(same, same, same.flip(0), max_cells=8) == (0.0, 5)
    assert row_distance(same, same, column(7, 7, 7, 7), max_cells=8) == (1.0, 5)  # all in the other cell
    # Two cells: the pilot's most frequent outcome (0) and the rest, so 1, 2 and 3 look alike.
    assert row_distance(column(0, 0, 1), column(0, 1, 1, 1), column(0, 2, 3, 3), max_cells=2) == (0.0, 2)
