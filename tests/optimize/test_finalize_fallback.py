"""`finalize` when the best candidate fails its re-measurement (here a held-out workload it sabotages): the next best
correct candidate is re-measured and becomes the result, and the result says so."""

from __future__ import annotations

import pytest

from conftest import make_solution
from optimize.candidates import HELD_OUT, SLOW, baselines_file, vector_add
from optimize.loop_fixtures import (
    SLOW_ADD,
    agent_command,
    fast_settings,
    journal_records,
    loop_config,
    vector_add_problem,
)
from solbench.optimize import make

HARDWARE = "H100_SXM"
SABOTEUR = "import torch\n\ndef run(x, y):\n    return x - y if x.shape[0] in (7777, 20000) else x + y\n"
"""Fast and right on the public workloads, wrong on the held-out ones (N=7777 here, N=20000 in the loop's problem)."""


@pytest.mark.slow
def test_finalize_falls_back_to_the_next_best_correct_candidate_and_says_so(tmp_path, fast_config):
    problem = vector_add(tmp_path / "vector_add", 1000, 4099, held_out=True)
    baselines = baselines_file(tmp_path / "baselines.json", HARDWARE, "n1000", "n4099", HELD_OUT)
    with make(
        problem, hardware=HARDWARE, config=fast_config, held_out=[HELD_OUT], baselines=baselines, warm_sandboxes=False
    ) as env:
        honest = env.step(make_solution(SLOW, name="slow"))
        saboteur = env.step(make_solution(SABOTEUR, name="saboteur"))
        assert saboteur.info.is_best and saboteur.reward > honest.reward and env.best.candidate_id == 2
        stepped = env.snapshot()

        final = env.finalize()
        assert final.correct and final.candidate_id == 1 and final.solution.name == "slow" and final.tried == [2, 1]
        assert f"candidate 2 failed the re-measurement ({HELD_OUT} (held out): INCORRECT_NUMERICAL)" in final.note
        assert "fell back to the next best correct candidate" in final.note

    # the same candidates in an env not yet finalized (a finalized one answers its first result again)
    with make(
        problem, hardware=HARDWARE, config=fast_config, held_out=[HELD_OUT], baselines=baselines, warm_sandboxes=False
    ) as env:
        env.resume(stepped)
        alone = env.finalize(fallbacks=0)
        assert not alone.correct and alone.candidate_id == 2 and alone.tried == [2]
        assert "none of the 1 re-measured candidate(s) passed every workload" in alone.note


@pytest.mark.slow
def test_the_loop_records_the_fallback_as_the_runs_best(tmp_path, probed_home):
    from solbench.optimize.loop import run_optimize

    agent = f"solution('honest', {SLOW_ADD!r}) if ROUND == 1 else solution('saboteur', source={SABOTEUR!r})\n"
    workspace = tmp_path / "run"
    notes = []
    settings = fast_settings(
        vector_add_problem(tmp_path), agent_command(tmp_path, agent), workspace, loop_config(), rounds=2
    )
    result = run_optimize(settings, on_note=notes.append)
    final = journal_records(workspace)[-1]
    assert final["type"] == "final" and final["best"] == "1-1" and final["result"]["tried"] == [2, 1]
    assert result.best == "1-1" and any("fell back" in note for note in notes)
