"""Replay a run: evaluate candidates of its journal again in a fresh env and compare with what was recorded.

The fresh env is made as the run's was (problem, hardware, evaluation settings, held-out split, from
the journal's run record) but without the run's budget and without its result cache, so every
candidate is measured anew. What must agree: the status on every public workload (correctness is
deterministic up to the evaluator's fresh secret inputs); rewards and latencies are reported side
by side, since timing varies between runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from solbench.evaluation.config import EvaluationConfig
from solbench.optimize.journal import JOURNAL_FILE, CandidateRecord, Journal
from solbench.optimize.loop_errors import WorkspaceError
from solbench.optimize.resume import run_state
from solbench.optimize.run_settings import config_from_json


@dataclass(frozen=True)
class WorkloadReplay:
    workload: str
    recorded_status: str
    replayed_status: str
    recorded_latency_ms: float | None
    replayed_latency_ms: float | None
    recorded_seed: int | None = None
    replayed_seed: int | None = None
    """The input seeds (the replay's is `seed` when one was given, else a fresh one)."""

    @property
    def agrees(self) -> bool:
        return self.recorded_status == self.replayed_status


@dataclass(frozen=True)
class CandidateReplay:
    candidate_id: str
    recorded_reward: float | None
    replayed_reward: float | None
    recorded_cheat: bool
    replayed_cheat: bool
    workloads: list[WorkloadReplay] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        """Same statuses everywhere and the same cheat verdict (rewards may differ by timing noise)."""
        return self.recorded_cheat == self.replayed_cheat and all(w.agrees for w in self.workloads)


@dataclass(frozen=True)
class ReplayReport:
    workspace: Path
    candidates: list[CandidateReplay]

    @property
    def agrees(self) -> bool:
        return all(c.agrees for c in self.candidates)


def replay_run(
    workspace: Path,
    candidate_ids: list[str] | None = None,
    *,
    best_only: bool = False,
    config=None,
    seed: int | None = None,
) -> ReplayReport:
    """Re-evaluate the named candidates (default: every evaluated one; `best_only`: the final best).

    `config` overrides the run's evaluation settings (for a quicker replay); `seed` makes every workload's inputs
    from it instead of a fresh secret seed, so the recorded `input_seed` of a failing workload replays exactly the
    inputs it failed on. Raises WorkspaceError when the folder holds no run or a named candidate is not in it.
    """
    from solbench.optimize.env import make
    from solbench.spec import Solution

    journal_path = Path(workspace) / JOURNAL_FILE
    state = run_state(Journal(journal_path).read())
    if state.run is None:
        raise WorkspaceError(f"{journal_path}: no optimisation run there (no journal, or no run record)")
    chosen = _choose(state, candidate_ids, best_only, journal_path)
    settings = state.run.settings
    config = config or config_from_json(settings.get("config")) or EvaluationConfig()
    env = make(
        state.run.problem,
        hardware=settings.get("hardware", "local"),
        config=replace(config, input_seed=seed),
        cache=None,
        held_out=settings.get("held_out"),
        baselines=settings.get("baselines"),
    )
    env.reset()
    replays = []
    for record in chosen:
        result = env.step(Solution.model_validate(record.solution))
        replays.append(_compare(record, result))
    return ReplayReport(workspace=Path(workspace), candidates=replays)


def _choose(state, candidate_ids: list[str] | None, best_only: bool, journal_path: Path) -> list[CandidateRecord]:
    evaluated = {record.candidate_id: record for record in state.evaluated}
    if best_only:
        best = state.final.best if state.final else None
        if best is None:
            raise WorkspaceError(
                f"{journal_path}: the run has no final best candidate (not finished, or none "
                f"was correct); name candidates with --candidate"
            )
        candidate_ids = [best]
    if not candidate_ids:
        return list(evaluated.values())
    unknown = [c for c in candidate_ids if c not in evaluated]
    if unknown:
        raise WorkspaceError(
            f"{journal_path}: no evaluated candidate {', '.join(unknown)} (known: {', '.join(evaluated) or 'none'})"
        )
    return [evaluated[c] for c in candidate_ids]


def _compare(record: CandidateRecord, result) -> CandidateReplay:
    recorded = record.result or {}
    by_workload = {f["workload"]: f for f in recorded.get("feedback", [])}
    workloads = []
    for feedback in result.feedback:
        before = by_workload.get(feedback.workload, {})
        workloads.append(
            WorkloadReplay(
                workload=feedback.workload,
                recorded_status=before.get("status", "absent"),
                replayed_status=feedback.status,
                recorded_latency_ms=before.get("latency_ms"),
                replayed_latency_ms=feedback.latency_ms,
                recorded_seed=before.get("input_seed"),
                replayed_seed=feedback.input_seed,
            )
        )
    return CandidateReplay(
        candidate_id=record.candidate_id,
        recorded_reward=recorded.get("reward"),
        replayed_reward=result.reward,
        recorded_cheat=bool(recorded.get("info", {}).get("flagged_cheat")),
        replayed_cheat=bool(result.info.flagged_cheat),
        workloads=workloads,
    )
