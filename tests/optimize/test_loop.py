"""The loop end to end with a scripted agent that improves over rounds: the round folder contract, `solbench test`
from inside a round, the journal, the strategy memory, finalize's re-measurement (replay: test_loop_resume.py)."""

from __future__ import annotations

import json

import pytest

from optimize.loop_fixtures import (
    FAST_ADD,
    SLOW_ADD,
    agent_command,
    fast_settings,
    journal_records,
    loop_config,
    vector_add_problem,
)

IMPROVING_AGENT = f"""
import subprocess
seen = {{"files": sorted(str(p) for p in Path(".").rglob("*") if ".solbench" not in p.parts),
        "env": {{k: os.environ[k] for k in ("SOLBENCH_ROUND", "SOLBENCH_WORKSPACE", "SOLBENCH_BUDGET_LEFT",
                                          "SOLBENCH_DEVICE")}},
        "cwd": os.getcwd(), "feedback": json.loads(Path("feedback.json").read_text()),
        "workloads": [json.loads(line)["uuid"] for line in Path("problem/workload.jsonl").read_text().splitlines()]}}
Path(os.environ["SEEN_DIR"], f"round{{ROUND}}.json").write_text(json.dumps(seen))
if ROUND == 1:
    solution("slow_add", {SLOW_ADD!r}, technique="forty redundant adds")
    test = subprocess.run([sys.executable, "-m", "solbench", "test", "solution.json", "--json"],
                          capture_output=True, text=True)
    Path(os.environ["SEEN_DIR"], "test.json").write_text(json.dumps({{"rc": test.returncode, "out": test.stdout,
                                                                      "err": test.stderr}}))
else:
    solution("fast_add", {FAST_ADD!r}, description="one add\\nno temporaries")
"""


@pytest.mark.slow
def test_scripted_agent_improves_and_best_is_remeasured(tmp_path, probed_home, monkeypatch):
    from solbench.optimize.loop import run_optimize

    seen = tmp_path / "seen"
    seen.mkdir()
    monkeypatch.setenv("SEEN_DIR", str(seen))
    problem = vector_add_problem(tmp_path)
    workspace = tmp_path / "run"
    rounds = []
    result = run_optimize(
        fast_settings(
            problem,
            agent_command(tmp_path, IMPROVING_AGENT),
            workspace,
            loop_config(),
            rounds=2,
            candidates=2,
            budget_evals=5,
        ),
        on_round=rounds.append,
    )

    # Improvement over rounds, and the best is the later, faster candidate.
    assert [r.candidates[0].candidate_id for r in rounds] == ["1-1", "2-1"]
    assert all(r.candidates[0].statuses == {"PASSED": 3} for r in rounds)
    assert rounds[1].candidates[0].reward > rounds[0].candidates[0].reward
    assert result.best == "2-1"
    # finalize re-measured the best on every workload, the held-out one included.
    final = result.final
    assert final["candidate_id"] == 2 and final["correct"] is True
    assert len(final["held_out"]) == 1 and len(final["feedback"]) == 4
    held_out = final["held_out"][0]
    best = json.loads((workspace / "best" / "solution.json").read_text())
    assert best["name"] == "fast_add"
    assert json.loads((workspace / "best" / "result.json").read_text())["candidate"] == "2-1"

    # The round folder contract: public workloads only, history and feedback of earlier rounds, the variables.
    round1 = json.loads((seen / "round1.json").read_text())
    round2 = json.loads((seen / "round2.json").read_text())
    assert {
        "problem/definition.json",
        "problem/workload.jsonl",
        "problem/reference.py",
        "problem/sol.json",
        "problem/hardware.json",
        "history",
        "feedback.json",
        "memory.jsonl",
    } <= set(round1["files"])
    assert len(round1["workloads"]) == 3 and held_out not in round1["workloads"]
    assert round1["env"]["SOLBENCH_ROUND"] == "1" and round1["env"]["SOLBENCH_WORKSPACE"] == round1["cwd"]
    assert round1["env"]["SOLBENCH_BUDGET_LEFT"] == "5" and round2["env"]["SOLBENCH_BUDGET_LEFT"] == "4"
    assert round1["env"]["SOLBENCH_DEVICE"] == "cpu"
    assert {"history/1-1/solution.json", "history/1-1/feedback.json", "history/best/solution.json"} <= set(
        round2["files"]
    )
    feedback = [entry for entry in round2["feedback"] if "candidate" in entry]
    assert feedback[0]["candidate"] == "1-1" and len(feedback[0]["feedback"]) == 3

    # `solbench test` inside the round: answered by the loop's env, journaled, charged to the run's budget.
    test = json.loads((seen / "test.json").read_text())
    assert test["rc"] == 0, test["err"]
    response = json.loads(test["out"])
    assert response["result"]["passed"] is True and response["budget_left"]["tests_used"] == 1
    records = journal_records(workspace)
    assert [r["type"] for r in records].count("test") == 1
    candidates = [r for r in records if r["type"] == "candidate"]
    assert [r["k"] for r in candidates] == [1, 1]
    assert [[t["evaluation"]["status"] for t in r["traces"]] for r in candidates] == [["PASSED"] * 3] * 2
    assert records[-1]["type"] == "final" and records[-1]["best"] == "2-1"

    # The strategy memory: verified records from the loop's own measurement, the stated technique kept.
    memory = [json.loads(line) for line in (workspace / "memory.jsonl").read_text().splitlines()]
    assert [(m["candidate"], m["technique"], m["family"]) for m in memory] == [
        ("1-1", "forty redundant adds", "elementwise"),
        ("2-1", "one add", "elementwise"),
    ]
    assert memory[1]["gain"] > memory[0]["gain"]
