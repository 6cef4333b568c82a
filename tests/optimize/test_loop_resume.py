"""`solbench optimize --resume` after the process was killed during a round: finished candidates are restored from
the journal, not evaluated again, and the interrupted round runs its agent again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from optimize.loop_fixtures import (FAST_ADD, FAST_CLI_OPTIONS, SLOW_ADD, agent_command, journal_records,
                                    vector_add_problem, write_baselines)

KILLED_AGENT = f'''
import time
marker = Path(os.environ["MARKERS"])
if ROUND == 1:
    solution("slow_add", {SLOW_ADD!r})
elif not (marker / "killed").exists():  # the first time round 2 runs: say so, then work "forever"
    (marker / "round2.json").write_text(json.dumps({{"group": os.getpgrp()}}))
    time.sleep(300)
else:
    solution("fast_add", {FAST_ADD!r})
'''


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
    command = [sys.executable, "-m", "solbench", "optimize", str(problem), "--agent",
               agent_command(tmp_path, KILLED_AGENT), "--rounds", "2", "--workspace", str(workspace), *FAST_CLI_OPTIONS,
               "--baselines", str(write_baselines(tmp_path))]

    first = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(markers / "round2.json", first, 240)
    finally:
        first.kill()  # SIGKILL: no cleanup runs in the loop
        first.wait()
    agent_group = json.loads((markers / "round2.json").read_text())["group"]
    os.killpg(agent_group, signal.SIGKILL)  # its own process group outlives a SIGKILLed loop
    (markers / "killed").touch()
    before = journal_records(workspace)
    assert [r["type"] for r in before][-1] == "round_started" and before[-1]["round"] == 2
    assert [(r["round"], r["k"]) for r in before if r["type"] == "candidate"] == [(1, 1)]

    again = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "--resume" in again.stderr  # a second run never overwrites the first

    resumed = subprocess.run(command + ["--resume", "--json"], env=environment, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
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
    replay = subprocess.run([sys.executable, "-m", "solbench", "replay", str(workspace), "--best", "--json"],
                            env=environment, capture_output=True, text=True, timeout=300)
    assert replay.returncode == 0, replay.stderr
    report = json.loads(replay.stdout)
    assert report["agrees"] and [c["candidate_id"] for c in report["candidates"]] == ["2-1"]
