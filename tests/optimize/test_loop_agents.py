"""Agents that misbehave: crash, hang past the timeout (with a child), edit problem/, cheat. None stops the loop, none
changes the scoring, and a cheat never becomes best."""

from __future__ import annotations

import json
import os
import time

import pytest

from optimize.loop_fixtures import (
    CHEAT,
    FAST_ADD,
    agent_command,
    fast_settings,
    journal_records,
    loop_config,
    vector_add_problem,
)

MISBEHAVING_AGENT = f"""
import subprocess, time
if ROUND == 1:  # crashes before writing anything
    raise SystemExit(3)
if ROUND == 2:  # hangs, with a child in its process group that would outlive it
    child = subprocess.Popen(["sleep", "300"])
    Path(os.environ["PIDS"]).write_text(json.dumps([os.getpid(), child.pid]))
    time.sleep(300)
if ROUND == 3:  # rewrites the problem it was given, then writes an honest candidate
    Path("problem/reference.py").write_text("def run(x, y):\\n    return x * 0\\n")
    definition = json.loads(Path("problem/definition.json").read_text())
    definition["reference"] = "import torch\\n\\ndef run(x, y):\\n    return torch.zeros_like(x)\\n"
    Path("problem/definition.json").write_text(json.dumps(definition))
    Path("problem/workload.jsonl").write_text("")
    solution("honest_add", {FAST_ADD!r})
if ROUND == 4:  # a cheat that would look fastest (the timer patched to zero), and a broken file
    solution("cheat", source={CHEAT!r}, path="solutions/a.json")
    Path("solutions/b.json").write_text("{{not json")
    other = json.loads(Path("solutions/a.json").read_text())
    Path("solutions/c.json").write_text(json.dumps(dict(other, definition="matmul")))
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead too
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_crash_hang_edit_and_cheat_do_not_stop_the_loop_or_change_scoring(tmp_path, probed_home, monkeypatch):
    from solbench.optimize.loop import run_optimize

    pids = tmp_path / "pids.json"
    monkeypatch.setenv("PIDS", str(pids))
    problem = vector_add_problem(tmp_path)
    workspace = tmp_path / "run"
    rounds = []
    result = run_optimize(
        fast_settings(
            problem,
            agent_command(tmp_path, MISBEHAVING_AGENT),
            workspace,
            loop_config(),
            rounds=4,
            candidates=3,
            agent_timeout_s=3,
        ),
        on_round=rounds.append,
    )
    assert [r.round for r in rounds] == [1, 2, 3, 4]

    # The crash and the hang each cost their round only; the hang's whole process group is gone.
    assert rounds[0].agent.exit_code == 3 and rounds[0].candidates == []
    assert rounds[1].agent.timed_out and rounds[1].candidates == []
    agent_pid, child_pid = json.loads(pids.read_text())
    deadline = time.monotonic() + 5
    while (_alive(agent_pid) or _alive(child_pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(agent_pid) and not _alive(child_pid)

    # The edit is recorded; the candidate is scored against the true problem (x + y passes, not zeros).
    assert rounds[2].problem_edits == ["definition.json", "reference.py", "workload.jsonl"]
    assert rounds[2].candidates[0].statuses == {"PASSED": 3}
    records = journal_records(workspace)
    assert [r["files"] for r in records if r["type"] == "problem_edited"] == [
        ["definition.json", "reference.py", "workload.jsonl"]
    ]

    # The cheat is flagged, never best; the unreadable file and the other problem's solution are journaled, not
    # evaluated.
    cheat, broken, other = rounds[3].candidates
    assert cheat.flagged_cheat and cheat.statuses == {"REWARD_HACK": 3}
    assert broken.error.startswith("not a solution")
    assert "solution.definition: 'matmul': this problem is 'vector_add'" in other.error
    assert result.best == "3-1" and rounds[3].best == "3-1"
    assert json.loads((workspace / "best" / "solution.json").read_text())["name"] == "honest_add"
    agents = [r for r in records if r["type"] == "agent"]
    assert [(a["exit_code"], a["timed_out"]) for a in agents] == [(3, False), (None, True), (0, False), (0, False)]
    memory = [json.loads(line) for line in (workspace / "memory.jsonl").read_text().splitlines()]
    assert [m["candidate"] for m in memory] == ["3-1"]  # the cheat left no strategy record
