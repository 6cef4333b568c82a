"""The environment end to end through real sandboxes: a scripted agent improving, a cheat, the budget, restore;
which candidate may be `best`, from restored records alone."""

from __future__ import annotations

import pytest

import solbench
from conftest import make_solution
from optimize.candidates import BROKEN, CHEAT, FAST, HELD_OUT, SLOW, baselines_file, vector_add
from solbench.optimize import BudgetExhausted, InvalidCandidate, RestoreMismatch, make

HARDWARE = "H100_SXM"  # T_SOL from the database: no probe of this CPU needed


@pytest.mark.slow
def test_a_scripted_agent_improves_a_cheat_never_becomes_best_and_finalize_remeasures_on_held_out(
    tmp_path, fast_config
):
    problem = vector_add(tmp_path / "vector_add", 1000, 4099, held_out=True)
    baselines = baselines_file(tmp_path / "baselines.json", HARDWARE, "n1000", "n4099", HELD_OUT)
    env = solbench.make(problem, hardware=HARDWARE, config=fast_config, held_out=[HELD_OUT], baselines=baselines)
    card = env.reset(seed=0)
    assert [w.uuid for w in card.workloads] == ["n1000", "n4099"] and card.held_out_workloads == 1
    assert all(w.t_sol_ms > 0 and w.t_b_ms == 0.05 for w in card.workloads)
    seen = [card.model_dump_json()]

    slow = env.step(make_solution(SLOW, name="slow"))
    assert slow.info.correct and slow.info.is_best and env.best.candidate_id == 1
    spare = env.warm_spares  # started when the evaluation ended: it warms up while the agent thinks
    assert len(spare) == 1
    fast = env.step(make_solution(FAST, name="fast"))
    assert len(env.warm_spares) == 1 and env.warm_spares != spare  # the spare ran "fast"; a new one waits
    assert fast.info.correct and fast.reward > slow.reward and env.best.candidate_id == 2
    assert all(
        f.status == "PASSED" and f.latency_ms and f.score is not None and f.fraction_of_sol for f in fast.feedback
    )
    cheat = env.step(make_solution(CHEAT, name="cheat"))
    assert cheat.info.flagged_cheat and cheat.reward == 0 and not cheat.info.is_best
    assert {f.status for f in cheat.feedback} == {"REWARD_HACK"} and "input_mutation" in cheat.feedback[0].error
    assert cheat.feedback[1].same_error_as == "n1000" and cheat.feedback[1].error is None  # told once
    assert env.best.candidate_id == 2 and [c.flagged_cheat for c in env.history] == [False, False, True]
    seen += [r.model_dump_json() for r in (slow, fast, cheat)]
    assert not any(HELD_OUT in text or '"N":7777' in text for text in seen)

    final = env.finalize()
    assert final.candidate_id == 2 and final.solution.name == "fast" and final.held_out == [HELD_OUT]
    assert [f.workload for f in final.feedback] == ["n1000", "n4099", HELD_OUT] and final.correct
    assert final.held_out_reward is not None and final.held_out_reward > 0
    assert all(t.evaluation.solbench.cache is None for t in final.traces)  # measured anew, not read from a cache
    waiting = env.warm_spares
    env.close()
    assert env.warm_spares == [] and not any(_running(pid) for pid in waiting)


def _running(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie not yet reaped is not running
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow
def test_the_budget_runs_out_cache_hits_are_free_and_restore_reseats_without_evaluating(tmp_path, fast_config):
    problem = vector_add(tmp_path / "vector_add", 1000, 4099, 50000)
    env = make(
        problem,
        hardware=HARDWARE,
        config=fast_config,
        budget=solbench.Budget(evals=2, tests=1),
        cache=tmp_path / "cache",
        held_out=[],
    )
    card = env.reset()  # no baselines file: the reference is timed once, here, pinned, and never again
    assert all(w.t_b_ms and "reference timed once on" in w.t_b_source for w in card.workloads)
    checked = env.test(make_solution(FAST))
    assert checked.passed and [w.workload for w in checked.workloads] == ["n1000", "n4099"]  # the two smallest
    tested = [r for r in (tmp_path / "cache").rglob("*.json") if '"correctness_only":true' in r.read_text()]
    assert tested, "env.test evaluates correctness only: nothing timed"
    assert checked.budget_left.tests == 0 and checked.budget_left.evals == 2

    with pytest.raises(InvalidCandidate, match="solution.definition: 'gemm'"):
        env.step(make_solution(FAST, definition="gemm"))  # costs nothing
    first = env.step(make_solution(FAST, name="fast"))
    assert not first.info.cache_hit and first.info.budget_left.evals == 1 and not first.done
    again = env.step(make_solution(FAST, name="fast again"))
    assert again.info.cache_hit and again.info.cache_key == first.info.cache_key
    assert again.info.budget_left.evals == 1 and again.info.budget_left.cache_hits == 1 and not again.done
    broken = env.step(make_solution(BROKEN, name="broken"))
    assert broken.done and broken.info.budget_left.exhausted and not broken.info.correct
    assert broken.feedback[0].status == "COMPILE_ERROR" and broken.feedback[0].error
    assert [f.same_error_as for f in broken.feedback] == [None, "n1000", "n1000"]
    with pytest.raises(BudgetExhausted, match="2 of 2 evaluations used"):
        env.step(make_solution(FAST, name="fast"))
    with pytest.raises(BudgetExhausted, match="1 of 1 tests used"):
        env.test(make_solution(SLOW))

    fresh_cache = tmp_path / "untouched-cache"
    resumed = make(
        problem, hardware=HARDWARE, config=fast_config, budget=solbench.Budget(evals=2), cache=fresh_cache, held_out=[]
    )
    resumed.restore([r.model_dump(mode="json") for r in env.results])  # as a journal would hold them
    assert [c.candidate_id for c in resumed.history] == [1, 2, 3] and resumed.best.candidate_id == 1
    left, before = resumed.budget_left, env.budget_left
    assert (left.evals_used, left.cache_hits, left.exhausted) == (before.evals_used, before.cache_hits, True)
    steps_seconds = sum(r.info.seconds for r in env.results if not r.info.cache_hit)  # tests are not journaled
    assert left.seconds_used == pytest.approx(steps_seconds, abs=0.01) and left.tests_used == 0
    assert not fresh_cache.exists()  # nothing was evaluated
    other = make(problem, hardware=HARDWARE, reward="speedup")
    with pytest.raises(RestoreMismatch, match="reward 'sol'"):
        other.restore(env.results)


@pytest.mark.slow
def test_the_reference_is_timed_for_t_b_in_its_cpu_runnable_form(tmp_path, fast_config):
    """A reference that names the CUDA device runs on the CPU (spec/cpu_reference.py); the environment's own T_b
    timing packages it for the device it evaluates on, so T_b is measured rather than missing."""
    from conftest import VECTOR_ADD, vector_workloads, write_problem

    names_cuda = {
        **VECTOR_ADD,
        "reference": "import torch\n\ndef run(x, y):\n    return x + y + torch.zeros(1, device='cuda')\n",
    }
    problem = write_problem(tmp_path / "vector_add", names_cuda, vector_workloads(1000))
    env = solbench.make(problem, hardware=HARDWARE, config=fast_config)
    try:
        [workload] = env.reset(seed=0).workloads
        assert workload.t_b_ms and workload.t_b_ms > 0
    finally:
        env.close()


def _record(name: str, reward: float, *, correct: bool = True, flagged: bool = False) -> dict:
    """A journal's StepResult (as `restore` takes it) with these figures, for n1000 and n4099."""
    status = "REWARD_HACK" if flagged else "PASSED" if correct else "INCORRECT_NUMERICAL"
    feedback = [{"workload": "n1000", "status": "PASSED", "score": reward}, {"workload": "n4099", "status": status}]
    info = {
        "candidate_id": 0,
        "cache_hit": True,
        "flagged_cheat": flagged,
        "correct": correct,
        "is_best": False,
        "seconds": 0.0,
        "budget_left": {},
    }
    return {
        "problem": "vector_add",
        "reward_kind": "sol",
        "reward": reward,
        "feedback": feedback,
        "done": False,
        "info": info,
        "solution": make_solution(FAST, name=name).model_dump(mode="json"),
    }


@pytest.mark.parametrize(
    "failing", [{"correct": False}, {"correct": True, "flagged": True}], ids=["incorrect", "flagged"]
)
def test_best_is_never_an_incorrect_or_flagged_candidate_however_high_its_reward(tmp_path, failing):
    """`best` is what finalize re-measures and a run reports: only a correct candidate without a cheat flag may
    be it, even where a failing one's reward is higher (a partly scored candidate, a journal's figures); the
    flag alone keeps a candidate out, whatever `correct` says."""
    env = make(vector_add(tmp_path / "vector_add", 1000, 4099), hardware=HARDWARE, held_out=[])
    env.restore([_record("failing", 0.9, **failing)])  # no sandbox: restore re-seats without evaluating
    assert env.best is None and env.finalize().note == "no correct candidate to re-measure"
    env.restore([_record("slow but correct", 0.1), _record("failing again", 0.9, **failing)])
    assert env.best.candidate_id == 2 and env.best.solution.name == "slow but correct"


@pytest.mark.slow
def test_a_candidate_measured_below_the_speed_of_light_floor_earns_0_and_is_never_best(tmp_path, fast_config):
    """On a hardware whose T_SOL any CPU kernel beats (1 MB/s memory: 12 ms for n1000), an honest FAST candidate
    is measured below the floor: every workload IMPLAUSIBLE, reward 0, not best, and the feedback says why."""
    from dataclasses import replace

    from solbench.hardware import lookup

    slow = replace(lookup(HARDWARE), id="SLOW_TEST", kind="cpu", memory_bandwidth_bytes_per_s=1e6)
    problem = vector_add(tmp_path / "vector_add", 1000, 4099)
    baselines = baselines_file(tmp_path / "baselines.json", slow.id, "n1000", "n4099", latency_ms=50.0)
    env = make(problem, hardware=slow, config=fast_config, held_out=[], baselines=baselines, warm_sandboxes=False)
    try:
        result = env.step(make_solution(FAST, name="faster than light"))
        assert result.reward == 0 and not result.info.is_best and not result.info.correct and env.best is None
        assert not result.info.flagged_cheat  # not a cheat proven: a measurement the hardware cannot allow
        first = result.feedback[0]
        assert {f.status for f in result.feedback} == {"IMPLAUSIBLE"} and first.failed_rule == "speed_of_light"
        assert first.implausible and first.score == 0.0 and first.latency_ms < first.t_sol_ms
        assert "below the speed-of-light floor" in first.error and "memory-bound" in first.error
        assert env.finalize().note == "no correct candidate to re-measure"
    finally:
        env.close()
