"""The agent-facing environment at its edges: budgets under concurrent calls, malformed requests and actions, the
gym adapter's spaces and card, and what `finalize` ends. Evaluation is replaced by a stub where it does not
matter, so every test is fast."""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import pytest

from conftest import solution_dict
from optimize.candidates import FAST, vector_add


def _env(tmp_path, **kwargs):
    import solbench

    problem = vector_add(tmp_path / "vector_add", 1000, 2000, 3000, held_out=True)
    env = solbench.make(problem, hardware="H100_SXM", warm_sandboxes=False, pin_t_b=False, **kwargs)
    # T_SOL and T_b as if worked out: no reference is timed.
    env._times = {w.uuid: (0.001, "memory", 0.05, "test") for w in env._problem.workloads}
    return env


def _stub_evaluation(env, monkeypatch, seconds=0.3):
    """Every evaluation 'measures' for `seconds` and returns no traces (reward 0): what matters is the ledger."""

    def evaluate(problem, solution, config, cache):
        time.sleep(seconds)
        return [], seconds, False, None

    monkeypatch.setattr(env, "_evaluate", evaluate)


def test_concurrent_steps_cannot_spend_more_evaluations_than_the_budget(tmp_path, monkeypatch):
    import solbench

    env = _env(tmp_path, budget=solbench.Budget(evals=1))
    _stub_evaluation(env, monkeypatch)
    outcomes = []

    def step(i):
        try:
            outcomes.append(env.step(solution_dict(FAST + f"# {i}\n")))
        except solbench.optimize.BudgetExhausted as error:
            outcomes.append(error)

    threads = [threading.Thread(target=step, args=(i,)) for i in range(3)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert env.budget_left.evals_used <= 1, f"Budget(evals=1) but {env.budget_left.evals_used} evaluations ran"


def test_a_non_integer_test_seed_is_an_invalid_seed_not_a_type_error(tmp_path):
    from solbench.optimize.errors import OptimizeError

    env = _env(tmp_path)
    with pytest.raises(OptimizeError):
        env.test(solution_dict(FAST), seed="abc")


def test_a_solbench_test_request_with_a_string_seed_does_not_crash_the_optimize_loop(tmp_path, monkeypatch):
    """`solbench optimize` answers `.solbench/requests/*.json` with OptimizeLoop._answer_test; an uncaught TypeError
    there ends the whole run with 'internal error'."""
    from solbench.optimize.loop import OptimizeLoop

    env = _env(tmp_path)
    journal = SimpleNamespace(append=lambda record: None)
    loop = SimpleNamespace(env=env, journal=journal)
    answer = OptimizeLoop._answer_test(loop, 1, {"solution": solution_dict(FAST), "seed": "abc"})
    assert "error" in answer


def test_deeply_nested_json_is_an_invalid_candidate(tmp_path):
    from solbench.optimize.env import solution_from_text
    from solbench.optimize.errors import InvalidCandidate

    with pytest.raises(InvalidCandidate):
        solution_from_text("[" * 100000 + "]" * 100000)


def test_the_gym_adapter_answers_deeply_nested_json_with_an_observation(tmp_path):
    from solbench.optimize.gym_env import SolbenchGymEnv

    gym = SolbenchGymEnv(env=_env(tmp_path))
    observation, reward, terminated, truncated, info = gym.step("[" * 100000 + "]" * 100000)
    assert "invalid_action" in info


def test_the_gym_observation_card_does_not_report_a_stale_budget(tmp_path, monkeypatch):
    import solbench
    from solbench.optimize.gym_env import SolbenchGymEnv

    env = _env(tmp_path, budget=solbench.Budget(evals=1))
    _stub_evaluation(env, monkeypatch, seconds=0.0)
    gym = SolbenchGymEnv(env=env)
    gym.reset()
    observation, _, _, truncated, info = gym.step(json.dumps(solution_dict(FAST)))
    assert truncated and info["budget_left"]["exhausted"]
    card_budget = json.loads(observation["card"])["budget_left"]
    assert card_budget == info["budget_left"], f"the observation's card says {card_budget} after the budget was spent"


def test_the_gym_adapter_refuses_an_action_larger_than_its_action_space(tmp_path, monkeypatch):
    from solbench.optimize.gym_env import SolbenchGymEnv

    env = _env(tmp_path)
    _stub_evaluation(env, monkeypatch, seconds=0.0)
    gym = SolbenchGymEnv(env=env)
    action = json.dumps(solution_dict(FAST + "#" * (2 * gym.action_space.max_length)))
    assert not gym.action_space.contains(action)
    gym.step(action)
    assert env.budget_left.evals_used == 0, "an action outside the action space was evaluated and charged"


def test_a_deeply_nested_solution_json_is_journaled_not_a_crash_of_the_optimize_loop(tmp_path):
    """`solbench optimize` reads each candidate file with json.loads; a RecursionError ends the run ('internal
    error'), and `--resume` re-reads the same file, so the run can never finish."""
    from solbench.optimize.loop import OptimizeLoop
    from solbench.optimize.workspace import candidate_files

    (tmp_path / "round").mkdir()
    (tmp_path / "round" / "solution.json").write_text("[" * 100000 + "]" * 100000)
    (candidate,) = candidate_files(tmp_path / "round")
    loop = SimpleNamespace(settings=SimpleNamespace(candidates=4), _journal_candidate=lambda record: record)
    record = OptimizeLoop._evaluate(loop, 1, candidate, tmp_path / "round")
    assert record.error and "not a solution" in record.error


def test_a_local_finalize_ends_the_env_as_the_services_does(tmp_path, monkeypatch):
    """The first finalize is the env's result: a later one answers it again without measuring, and step and test
    are refused (over HTTP: 409), since a candidate made after the held-out results would not be measured on
    unseen workloads."""
    import solbench

    env = _env(tmp_path, budget=solbench.Budget(evals=2))
    _stub_evaluation(env, monkeypatch, seconds=0.0)
    evaluations = []
    stub = env._evaluate
    monkeypatch.setattr(env, "_evaluate", lambda *a: evaluations.append(a) or stub(*a))
    env.step(solution_dict(FAST))
    first = env.finalize()
    measured = len(evaluations)
    assert env.finalize() is first and len(evaluations) == measured
    assert env.budget_left.evals_used == 1
    with pytest.raises(solbench.optimize.AlreadyFinalized):
        env.step(solution_dict(FAST + "# after finalize\n"))
    with pytest.raises(solbench.optimize.AlreadyFinalized):
        env.test(solution_dict(FAST))
    assert len(evaluations) == measured


def test_done_counts_the_budget_used_not_the_places_held(tmp_path, monkeypatch):
    """A step finishing while another holds the last place, which that call then gives back (its evaluation
    failed), is not `done`: an evaluation is left."""
    import solbench

    env = _env(tmp_path, budget=solbench.Budget(evals=3))
    calls = []

    def evaluate(problem, solution, config, cache):
        calls.append(solution)
        if len(calls) == 3:  # the thread's second call runs long, then fails (a crash, an interrupt)
            time.sleep(0.6)
            raise RuntimeError("evaluation failed")
        time.sleep(0.2 if len(calls) == 2 else 0.0)
        return [], 0.1, False, None

    monkeypatch.setattr(env, "_evaluate", evaluate)
    env.step(solution_dict(FAST + "# 0\n"))  # 1 of 3 used
    results = {}

    def first():
        results["first"] = env.step(solution_dict(FAST + "# 1\n"))

    def second():
        try:
            env.step(solution_dict(FAST + "# 2\n"))
        except RuntimeError:
            pass

    a = threading.Thread(target=first)
    a.start()
    time.sleep(0.05)
    b = threading.Thread(target=second)
    b.start()
    a.join()
    b.join()
    left = env.budget_left
    assert left.evals == 1 and not left.exhausted  # one evaluation is left after all
    assert not results["first"].done, "the step reported done (terminated) with an evaluation left"
