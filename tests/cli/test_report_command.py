"""`solbench report` and `solbench export trajectories` as real processes, on a real short optimize run; bad input
exits 2 with one line naming the file."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from optimize.loop_fixtures import FAST_ADD, agent_command, fast_settings, loop_config, vector_add_problem

TWO_CANDIDATES = f"""
solution("fast_add", {FAST_ADD!r})
solution("wrong_add", "return x - y", path="solutions/wrong.json")
"""


def solbench(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)], capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_report_and_export_of_a_real_optimize_run(tmp_path, probed_home):
    from solbench.optimize.loop import run_optimize

    settings = fast_settings(
        vector_add_problem(tmp_path), agent_command(tmp_path, TWO_CANDIDATES), tmp_path / "run", loop_config(), rounds=1
    )
    run_optimize(settings)
    optimize_run = settings.workspace
    report = solbench("report", optimize_run, "--json", "--pass-k", "1", "--pass-k", "2")
    assert report.returncode == 0, report.stderr
    metrics = json.loads(report.stdout)
    (problem,) = metrics["problems"]
    assert (problem["problem"], problem["set"], problem["rollouts"]) == ("vector_add", "all", 1)
    assert (problem["samples"], problem["correct_samples"]) == (2, 1)  # x - y fails every workload
    assert problem["pass_at_k"] == {"1": 0.5, "2": 1.0}
    assert problem["final_correct"] == 1 and problem["mean_score"] > 0
    assert set(problem["fast_p"]) == {"1", "1.2", "2"}
    assert [s["set"] for s in metrics["sets"]] == ["all"]

    table = solbench("report", optimize_run)
    assert table.returncode == 0 and "pass@1" in table.stdout and "vector_add" in table.stdout

    output = tmp_path / "trajectories.jsonl"
    export = solbench("export", "trajectories", optimize_run, "-o", output)
    assert export.returncode == 0, export.stderr
    assert "1 trajectory(ies), 2 step(s)" in export.stderr
    from solbench.optimize.trajectory import read_trajectories

    (trajectory,) = read_trajectories(output)
    assert trajectory.card is not None and trajectory.card.problem == "vector_add"  # the journal keeps the card
    assert [s.action.name for s in trajectory.steps if s.action] == ["fast_add", "wrong_add"]
    assert trajectory.final_candidate == "1-1" and trajectory.final is not None and trajectory.final.correct

    from solbench.optimize.loop_errors import WorkspaceError

    with pytest.raises(WorkspaceError, match="finalized"):  # the held-out results are in the workspace now
        run_optimize(replace(settings, resume=True, rounds=2))
    run_optimize(replace(settings, resume=True))  # nothing left to do: the stored result; the card it started from
    types = [json.loads(line)["type"] for line in (optimize_run / "journal.jsonl").read_text().splitlines()]
    assert types.count("card") == 1 and types.count("round_started") == 1


@pytest.mark.slow
@pytest.mark.parametrize("command", [["report"], ["export", "trajectories"]])
def test_a_foreign_file_exits_2_with_one_line_naming_it(tmp_path, command):
    foreign = tmp_path / "traces.jsonl"
    foreign.write_text('{"definition": "vector_add"}\n')
    extra = ["-o", tmp_path / "out.jsonl"] if command[0] == "export" else []
    result = solbench(*command, foreign, *extra)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"solbench: error: {foreign}: not a solbench optimize journal (its first line is no `run` record) "
        "or exported trajectories"
    ]
    assert not (tmp_path / "out.jsonl").exists()
