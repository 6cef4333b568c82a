"""Seed replay: every result reports the seed its inputs came from, and `env.test(..., seed=)` and
`solbench replay --seed` make exactly those inputs again, so a failure on some inputs can be reproduced."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import make_solution
from optimize.candidates import vector_add
from optimize.loop_fixtures import agent_command, fast_settings, loop_config, vector_add_problem
from solbench.evaluation import EvaluationConfig, HarnessOptionError
from solbench.optimize import InvalidSeed, UnknownWorkload, make

HARDWARE = "H100_SXM"
SIGN_DEPENDENT = (
    "import torch\n\ndef run(x, y):\n"
    "    # right or wrong depending on the inputs: the first element's sign decides\n"
    "    return x + y if float(x.flatten()[0]) < 0 else x - y\n"
)


@pytest.mark.parametrize("seed", [-1, 2**62, 1.5, True])
def test_an_input_seed_is_a_whole_number_below_2_62(seed):
    with pytest.raises(HarnessOptionError, match="input_seed"):
        EvaluationConfig(input_seed=seed)


@pytest.mark.slow
def test_env_test_replays_the_inputs_of_a_reported_seed(tmp_path, fast_config):
    problem = vector_add(tmp_path / "vector_add", 1000, 4099)
    candidate = make_solution(SIGN_DEPENDENT)
    with make(problem, hardware=HARDWARE, config=fast_config, held_out=[], warm_sandboxes=False) as env:
        first = env.test(candidate)  # a fresh secret seed per workload, reported with each status
        assert all(s.input_seed is not None for s in first.workloads)
        for status in first.workloads:
            [again] = env.test(candidate, seed=status.input_seed, workload=status.workload).workloads
            assert (again.workload, again.input_seed, again.status) == (
                status.workload,
                status.input_seed,
                status.status,
            )
        outcomes = {
            seed: env.test(candidate, seed=seed, workload="n1000").workloads[0].status for seed in range(8)
        }  # the seed decides the outcome: both occur among these seeds
        assert set(outcomes.values()) == {"PASSED", "INCORRECT_NUMERICAL"}
        with pytest.raises(UnknownWorkload, match="workload: 'n5' is not a public workload"):
            env.test(candidate, workload="n5")
        for seed in (-1, 2**62):  # the environment's refusal, which agents and the env server report as such
            with pytest.raises(InvalidSeed, match="seed: .* is not an input seed"):
                env.test(candidate, seed=seed)


@pytest.mark.slow
def test_solbench_replay_seed_reproduces_a_recorded_failure(tmp_path, probed_home, monkeypatch):
    from solbench.cli.app import app
    from solbench.optimize.loop import run_optimize
    from solbench.optimize.replay import replay_run

    agent = f"solution('sign dependent', source={SIGN_DEPENDENT!r})\n"
    workspace = tmp_path / "run"
    problem = vector_add_problem(tmp_path)
    run_optimize(fast_settings(problem, agent_command(tmp_path, agent), workspace, loop_config(), rounds=1))
    [record] = [
        json.loads(line)
        for line in (workspace / "journal.jsonl").read_text().splitlines()
        if '"type":"candidate"' in line
    ]
    recorded = {f["workload"]: f for f in record["result"]["feedback"]}
    assert all(f["input_seed"] is not None for f in recorded.values())

    for workload, feedback in recorded.items():  # each workload's failure (or pass) comes back on its own seed
        report = replay_run(workspace, seed=feedback["input_seed"])
        [replayed] = [w for w in report.candidates[0].workloads if w.workload == workload]
        assert replayed.replayed_seed == replayed.recorded_seed == feedback["input_seed"]
        assert replayed.replayed_status == feedback["status"]

    workload, feedback = next(iter(recorded.items()))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["replay", str(workspace), "--seed", str(feedback["input_seed"]), "--json"])
    replayed = {w["workload"]: w for w in json.loads(result.stdout)["candidates"][0]["workloads"]}
    assert replayed[workload]["replayed_seed"] == feedback["input_seed"]
    assert replayed[workload]["replayed_status"] == feedback["status"]
