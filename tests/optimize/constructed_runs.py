"""Optimize journals written record by record with chosen outcomes (statuses, speedups, held-out verdicts), so the
metrics are checked against numbers worked out by hand; real runs are in test_trajectories.py."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from conftest import VECTOR_ADD, solution_dict
from solbench.optimize.budget import BudgetLeft
from solbench.optimize.feedback import WorkloadFeedback
from solbench.optimize.journal import CandidateRecord, FinalRecord, Journal, RunRecord
from solbench.optimize.results import FinalResult, StepInfo, StepResult
from solbench.spec import Solution

T_B_MS = 1.0


@dataclass(frozen=True)
class Planned:
    """One candidate: its public statuses and speedup (T_b / T_k, the same on every workload)."""

    statuses: tuple[str, ...] = ("PASSED", "PASSED")
    speedup: float = 1.0
    score: float = 0.5
    not_a_solution: bool = False


def feedback(uuid: str, status: str, speedup: float, score: float) -> WorkloadFeedback:
    passed = status == "PASSED"
    return WorkloadFeedback(
        workload=uuid,
        status=status,
        latency_ms=T_B_MS / speedup if passed else None,
        t_b_ms=T_B_MS,
        t_sol_ms=0.01,
        score=score if passed else 0.0,
        speedup=speedup if passed else None,
    )


def write_run(
    root: Path,
    candidates: list[Planned],
    *,
    final_of: int | None,
    held_out_status: str = "PASSED",
    held_out_score: float | None = None,
    set_tag: str | None = "L1",
    problem: str = "vector_add",
) -> Path:
    """A run folder: a problem folder (its definition tagged with `set_tag`) and a journal with `candidates`
    in round 1 and, where `final_of` names one (1-based), finalize's re-measurement of it with the held-out
    workload ``h`` at `held_out_status` (with S `held_out_score`, by default the candidate's)."""
    definition = {**VECTOR_ADD, "name": problem, "tags": [f"set:{set_tag}"] if set_tag else []}
    problem_dir = root / "problem"
    problem_dir.mkdir(parents=True)
    (problem_dir / "definition.json").write_text(json.dumps(definition))
    journal = Journal(root / "run" / "journal.jsonl")
    journal.open()
    journal.append(
        RunRecord(
            problem=str(problem_dir),
            problem_sha256="0" * 64,
            agent="scripted",
            rounds=1,
            candidates=9,
            agent_timeout_s=1.0,
        )  # fmt: skip
    )
    solutions = {}
    for k, planned in enumerate(candidates, 1):
        solution = solution_dict("def run(x, y):\n    return x + y\n", definition=problem, name=f"c{k}")
        solutions[k] = solution
        if planned.not_a_solution:
            journal.append(CandidateRecord(round=1, k=k, file=f"c{k}.json", error="not a solution: bad JSON"))
            continue
        items = [feedback(f"w{i}", s, planned.speedup, planned.score) for i, s in enumerate(planned.statuses)]
        correct = all(s == "PASSED" for s in planned.statuses)
        result = StepResult(
            problem=problem,
            reward_kind="sol",
            reward=sum(f.score or 0 for f in items) / len(items),
            feedback=items,
            done=False,
            info=StepInfo(
                candidate_id=k,
                cache_hit=False,
                flagged_cheat="REWARD_HACK" in planned.statuses,
                correct=correct,
                is_best=False,
                seconds=0.1,
                budget_left=BudgetLeft(),
            ),  # fmt: skip
            solution=Solution.model_validate(solution),
        )
        journal.append(
            CandidateRecord(round=1, k=k, file=f"c{k}.json", solution=solution, result=result.model_dump(mode="json"))
        )
    if final_of is not None:
        planned = candidates[final_of - 1]
        items = [feedback(f"w{i}", "PASSED", planned.speedup, planned.score) for i in range(len(planned.statuses))]
        held_out_s = planned.score if held_out_score is None else held_out_score
        items.append(feedback("h", held_out_status, planned.speedup, held_out_s))
        final = FinalResult(
            problem=problem,
            candidate_id=final_of,
            solution=Solution.model_validate(solutions[final_of]),
            reward_kind="sol",
            reward=0.5,
            public_reward=0.5,
            held_out_reward=0.5,
            correct=held_out_status == "PASSED",
            flagged_cheat=held_out_status == "REWARD_HACK",
            feedback=items,
            held_out=["h"],
            traces=[],
        )
        journal.append(FinalRecord(best=f"1-{final_of}", result=final.model_dump(mode="json")))
    return root / "run"
