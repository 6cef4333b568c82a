"""`solbench optimize --resume` after the process was killed during a round: finished candidates are restored from
the journal, not evaluated again, and the interrupted round runs its agent again."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from conftest import process_alive
from optimize.loop_fixtures import (
    FAST_ADD,
    FAST_CLI_OPTIONS,
    SLOW_ADD,
    agent_command,
    journal_records,
    vector_add_problem,
    write_baselines,
)

KILLED_AGENT = f"""
import time
from dataclasses import replace
marker = Path(os.environ["MARKERS"])
if ROUND == 1:
    solution("slow_add", {SLOW_ADD!r})
elif not (marker / "killed").exists():  # the first time round 2 runs: say so, then work "forever"
    (marker / "round2.json").write_text(json.dumps({{"group": os.getpgrp()}}))
    time.sleep(300)
else:
    solution("fast_add", {FAST_ADD!r})
"""


def _wait_for(path, process, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)


@pytest.mark.slow
def test_resume_after_a_kill_mid_round_does_not_evaluate_finished_candidates_again(tmp_path, probed_home):
    problem = vector_add_problem(tmp_path)
    markers = tmp_path / "markers"
    markers.mkdir()
    workspace = tmp_path / "run"
    environment = {**os.environ, **probed_home, "MARKERS": str(markers)}
    command = [
        sys.executable,
        "-m",
        "solbench",
        "optimize",
        str(problem),
        "--agent",
        agent_command(tmp_path, KILLED_AGENT),
        "--rounds",
        "2",
        "--workspace",
        str(workspace),
        *FAST_CLI_OPTIONS,
        "--baselines",
        str(write_baselines(tmp_path)),
    ]

    first = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(markers / "round2.json", first, 240)
    finally:
        first.kill()  # SIGKILL: no cleanup runs in the loop
        first.wait()
    agent_group = json.loads((markers / "round2.json").read_text())["group"]
    assert process_alive(agent_group)  # its own process group outlives a SIGKILLed loop
    (markers / "killed").touch()
    before = journal_records(workspace)
    assert [(r["type"], r["round"]) for r in before[-2:]] == [("round_started", 2), ("agent_started", 2)]
    assert before[-1]["process_group"] == agent_group
    assert [(r["round"], r["k"]) for r in before if r["type"] == "candidate"] == [(1, 1)]

    again = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "--resume" in again.stderr  # a second run never overwrites the first

    try:
        resumed = subprocess.run(
            command + ["--resume", "--json"], env=environment, capture_output=True, text=True, timeout=300
        )
        assert not process_alive(agent_group)  # the resume ended the orphaned agent first
    finally:
        if process_alive(agent_group):
            os.killpg(agent_group, signal.SIGKILL)
    assert resumed.returncode == 0, resumed.stderr
    assert f"round 2: ended its agent (process group {agent_group})" in resumed.stderr
    assert "resumed: 1 candidate(s) from the journal" in resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["resumed_candidates"] == 1 and result["best"] == "2-1"
    assert [r["round"] for r in result["rounds"]] == [2]
    records = journal_records(workspace)
    assert [(r["round"], r["k"]) for r in records if r["type"] == "candidate"] == [(1, 1), (2, 1)]
    assert [r["round"] for r in records if r["type"] == "round_started"] == [1, 2, 2]
    assert [r["round"] for r in records if r["type"] == "agent"] == [1, 2]
    assert records[-1]["type"] == "final" and records[-1]["result"]["candidate_id"] == 2

    # The finished run's best, evaluated again by `solbench replay` from the journal alone.
    replay = subprocess.run(
        [sys.executable, "-m", "solbench", "replay", str(workspace), "--best", "--json"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert replay.returncode == 0, replay.stderr
    report = json.loads(replay.stdout)
    assert report["agrees"] and [c["candidate_id"] for c in report["candidates"]] == ["2-1"]


TWO_CANDIDATE_AGENT = f"""
runs = Path(os.environ["MARKERS"]) / "runs"
runs.write_text(str(int(runs.read_text() if runs.exists() else 0) + 1))
solution("slow_add", {SLOW_ADD!r}, path="solutions/a.json")
solution("fast_add", {FAST_ADD!r}, path="solutions/b.json")
"""


@pytest.mark.slow
def test_resume_after_a_kill_between_candidates_evaluates_only_the_rest(tmp_path, probed_home, monkeypatch):
    from optimize.loop_fixtures import fast_settings, loop_config
    from solbench.optimize.loop import run_optimize

    monkeypatch.setenv("MARKERS", str(tmp_path))
    problem = vector_add_problem(tmp_path)
    workspace = tmp_path / "run"
    settings = fast_settings(problem, agent_command(tmp_path, TWO_CANDIDATE_AGENT), workspace, loop_config(), rounds=1)
    run_optimize(settings)
    # What a kill right after the first candidate's record leaves: the journal up to that line, the round folder.
    lines = (workspace / "journal.jsonl").read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"type":"candidate"' in line)
    (workspace / "journal.jsonl").write_text("".join(lines[: first + 1]) + lines[first + 1][:40])
    shutil.rmtree(workspace / "cache")  # the second candidate's evaluation never finished, so it was never cached
    rounds = []
    result = run_optimize(replace(settings, resume=True), on_round=rounds.append)

    assert (tmp_path / "runs").read_text() == "1"  # the agent had finished: not run again
    assert result.resumed_candidates == 1 and rounds[0].resumed == 1
    assert [c.candidate_id for c in rounds[0].candidates] == ["1-2"]
    assert result.budget_left["evals_used"] == 2 and result.best == "1-2"
    records = journal_records(workspace)
    assert [(r["round"], r["k"]) for r in records if r["type"] == "candidate"] == [(1, 1), (1, 2)]


@pytest.mark.slow
def test_a_finalized_run_is_not_continued_with_more_rounds(tmp_path, probed_home, monkeypatch):
    """Finalize put the held-out workloads' results in the workspace (best/result.json, the journal): a further
    round's agent could read them there, so a resume with a larger --rounds is refused and runs no agent."""
    from optimize.loop_fixtures import fast_settings, loop_config
    from solbench.optimize.loop import run_optimize
    from solbench.optimize.loop_errors import WorkspaceError

    markers = tmp_path / "markers"
    markers.mkdir()
    monkeypatch.setenv("MARKERS", str(markers))
    agent = agent_command(
        tmp_path, f'(Path(os.environ["MARKERS"]) / f"round{{ROUND}}").touch()\nsolution("fast_add", {FAST_ADD!r})\n'
    )
    problem = vector_add_problem(tmp_path)
    workspace = tmp_path / "run"
    settings = fast_settings(problem, agent, workspace, loop_config(), rounds=1, candidates=1, budget_evals=3)
    first = run_optimize(settings)
    assert first.final is not None and first.final["held_out"]
    assert (workspace / "best" / "result.json").is_file()

    with pytest.raises(WorkspaceError, match="finalized after round 1"):
        run_optimize(replace(settings, rounds=2, resume=True))
    assert not (markers / "round2").exists(), "the second round's agent ran"
    # a resume with nothing left to do still answers the stored result
    again = run_optimize(replace(settings, resume=True))
    assert again.final == first.final and not again.rounds
