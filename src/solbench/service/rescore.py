"""`solbench admin rescore`: bring stored results up to date with the current problems, T_SOL, T_b and harness.

For each selected result:

- measured with another harness release, or on a problem version that is no longer current: the
  submission is queued again (the workers re-evaluate it on the current version; the new result
  replaces the old one and the change is recorded);
- otherwise only T_SOL (the analyzer or the hardware data changed) or T_b (a new baselines file)
  can have moved: the score is computed again from the stored traces, without running anything.

Every change is kept as a ScoreChange (old and new score, old and new harness, why).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from solbench.service.models import ProblemVersion, Result, ScoreChange, ServedProblem, Submission, utcnow


@dataclass(frozen=True)
class RescoreReport:
    selected: int
    requeued: int
    rescored: int
    """Results whose score changed without running (T_SOL or T_b moved)."""
    unchanged: int
    requeued_ids: tuple[int, ...] = ()
    """Submissions queued again: a Celery deployment hands them to its queue (see `solbench admin rescore`)."""


def _release(version: str) -> tuple[int, ...]:
    release = version.split("+", 1)[0]
    return tuple(int(p) if p.isdigit() else 0 for p in release.split("."))


def rescore(
    session_factory: sessionmaker[Session],
    *,
    problems: tuple[str, ...] = (),
    since_version: str | None = None,
    rerun: bool = True,
) -> RescoreReport:
    """Rescore the results of `problems` (default all) measured with harness release `since_version` or later
    (default all). `rerun=False` never queues a re-evaluation (only re-scores stored traces)."""
    from solbench.evaluation.result_cache import harness_version
    from solbench.service.catalog import baselines_for, t_sol_for
    from solbench.service.scoring import score_result
    from solbench.spec import Trace

    current_harness = harness_version()
    query = (
        select(Result.id, Result.harness_version)
        .join(Submission, Submission.id == Result.submission_id)
        .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
        .join(ServedProblem, ServedProblem.id == ProblemVersion.problem_id)
        .where(Submission.deleted_at.is_(None), Submission.status == "done")
        .order_by(Result.id)
    )
    if problems:
        query = query.where(ServedProblem.name.in_(problems))
    with session_factory() as session:
        selected = [
            rid
            for rid, harness in session.execute(query).all()
            if since_version is None or _release(harness) >= _release(since_version)
        ]
    requeued = rescored = unchanged = 0
    requeued_ids: list[int] = []
    for result_id in selected:
        with session_factory.begin() as session:
            result = session.get(Result, result_id)
            assert result is not None, "selected above"
            submission = session.get(Submission, result.submission_id)
            measured_on = session.get(ProblemVersion, result.problem_version_id)
            assert submission is not None and measured_on is not None, "a result's foreign keys"
            current = session.scalar(
                select(ProblemVersion).where(
                    ProblemVersion.problem_id == measured_on.problem_id, ProblemVersion.is_current.is_(True)
                )
            )
            reasons = []
            if result.harness_version != current_harness:
                reasons.append(f"harness {result.harness_version} -> {current_harness}")
            if current is not None and current.id != measured_on.id:
                reasons.append(f"problem version {measured_on.version_hash[:12]} -> {current.version_hash[:12]}")
            if reasons:
                if rerun:
                    submission.status, submission.rescore_reason = "queued", "; ".join(reasons)
                    submission.claim_token, submission.attempts = None, 0
                    requeued += 1
                    requeued_ids.append(submission.id)
                else:
                    unchanged += 1
                continue
            if submission.mode == "test":
                unchanged += 1
                continue
            name, hardware, version_id = measured_on.problem.name, result.hardware, measured_on.id
            held_out_workloads = [w["uuid"] for w in measured_on.held_out]
            t_b = baselines_for(session, name, hardware)
        t_sol = t_sol_for(session_factory, version_id, hardware)
        with session_factory.begin() as session:
            result = session.get(Result, result_id)
            assert result is not None, "selected above"
            traces = [Trace.model_validate(t) for t in result.traces]
            held_out = [Trace.model_validate(t) for t in result.held_out_traces]
            scores = score_result(traces, held_out, t_sol, t_b, hardware, held_out_workloads=held_out_workloads)
            why = _what_moved(result, t_sol, scores.t_b_ms)
            result.verdict, result.held_out_passed = scores.verdict, scores.held_out_passed  # the rules may have moved
            if scores.score == result.score and not why:
                unchanged += 1
                continue
            session.add(
                ScoreChange(
                    submission_id=result.submission_id,
                    old_score=result.score,
                    new_score=scores.score,
                    old_harness=result.harness_version,
                    new_harness=result.harness_version,
                    reason="re-scored without running: " + (why or "scores recomputed"),
                )
            )
            result.score, result.public_score, result.held_out_score = (
                scores.score,
                scores.public_score,
                scores.held_out_score,
            )
            result.t_sol_ms, result.t_b_ms, result.rescored_at = t_sol, scores.t_b_ms, utcnow()
            rescored += 1
    return RescoreReport(
        selected=len(selected),
        requeued=requeued,
        rescored=rescored,
        unchanged=unchanged,
        requeued_ids=tuple(requeued_ids),
    )


def _what_moved(result: Result, t_sol: dict, t_b: dict) -> str:
    moved = []
    if any(result.t_sol_ms.get(k) != v for k, v in t_sol.items() if k in result.t_sol_ms):
        moved.append("T_SOL changed")
    if any(result.t_b_ms.get(k) != v for k, v in t_b.items()):
        moved.append("T_b changed")
    return ", ".join(moved)
