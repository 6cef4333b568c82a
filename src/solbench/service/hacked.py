"""The hacked state of a ranked submission, and the admin's flag that sets it.

A ranked submission is hacked when a guard flagged one of its workloads (verdict REWARD_HACK), when one was
measured below the speed-of-light floor (IMPLAUSIBLE), or when an admin flagged it (`solbench admin flag`, a
SubmissionFlag row). A hacked submission leaves every ranking, total and first-places history (the rule is
`queries.counts_on_board`), and exists for nobody but its author and admins: to anyone else it is "no such
submission", as a private one is, so neither it nor the reason leaks. Its author and admins are told why
(`Hacked`); admins list them all (`flagged_submissions`: `GET /api/v1/admin/flagged`, the status page).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from solbench.scoring import score_trace
from solbench.scoring.sol_score import SPEED_OF_LIGHT_RULE
from solbench.service import queries
from solbench.service.errors import ServiceError, UnknownSubmission
from solbench.service.models import ProblemVersion, Result, ServedProblem, Submission, SubmissionFlag, User, utcnow
from solbench.service.scoring import HACKED_VERDICTS, IMPLAUSIBLE, PASSED
from solbench.service.times import UtcDateTime
from solbench.spec import Trace

MAX_REASON_CHARS = 2000
HELD_OUT_SECRET = "on a held-out workload: its details stay secret with the workload"

Source = Literal["admin", "guard", "speed_of_light"]


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class Hacked(_Data):
    """Why a submission is hacked: shown to its author and to admins only."""

    source: Source
    """admin (`solbench admin flag`), guard (a guard flagged a workload: REWARD_HACK) or speed_of_light (a workload
    measured below the speed-of-light floor: IMPLAUSIBLE). An admin's flag is named first where both apply."""
    reason: str
    rule: str | None = None
    """The rule that failed (a trace's `failed_rule`), for guard and speed_of_light."""
    flagged_by: str | None = None
    """Who flagged it (admin flags only)."""
    flagged_at: UtcDateTime | None = None
    """When it was flagged (admin) or measured (guard, speed_of_light)."""


class FlaggedSubmission(_Data):
    """A hacked submission as admins list it."""

    id: int
    user: str
    problem: str
    set: str
    submitted_at: UtcDateTime
    hacked: Hacked


def hacked_state(session: Session, submission: Submission) -> Hacked | None:
    """Why `submission` is hacked, or None when it is not (or is not ranked: only ranked submissions are on the
    boards)."""
    if submission.mode != queries.RANKED:
        return None
    flag = session.get(SubmissionFlag, submission.id)
    if flag is not None:
        return Hacked(source="admin", reason=flag.reason, flagged_by=flag.flagged_by, flagged_at=flag.flagged_at)
    result = submission.result
    if result is None or result.verdict not in HACKED_VERDICTS:
        return None
    return _by_verdict(result)


def _by_verdict(result: Result) -> Hacked:
    """The first workload that carries the verdict says why: public ones first, with their failure line; a held-out
    one names its rule only (its line would tell the hidden workload's times)."""
    source: Source = "speed_of_light" if result.verdict == IMPLAUSIBLE else "guard"
    for traces, secret in ((result.traces, False), (result.held_out_traces, True)):
        for raw in traces or []:
            why = _why_flagged(Trace.model_validate(raw), result)
            if why is not None:
                rule, line = why
                return Hacked(
                    source=source,
                    reason=f"{rule} {HELD_OUT_SECRET}" if secret else line,
                    rule=rule,
                    flagged_at=result.rescored_at or result.created_at,
                )
    return Hacked(source=source, reason=result.verdict, flagged_at=result.rescored_at or result.created_at)


def _why_flagged(trace: Trace, result: Result) -> tuple[str, str] | None:
    """(rule, one line) where a guard flagged this workload, or where it was measured below the speed-of-light floor
    with the T_SOL the result was scored with (the service stores the traces as run and decides the floor when it
    scores them: scoring.score_result); None for a workload neither flagged."""
    evaluation = trace.evaluation
    if evaluation is None:
        return None
    details = evaluation.solbench
    status = evaluation.status.value
    if status in HACKED_VERDICTS:
        rule = (details.failed_rule if details else None) or status
        return rule, (details.failure if details else None) or status
    t_sol_ms = (result.t_sol_ms or {}).get(trace.workload.uuid)
    if status != PASSED or t_sol_ms is None:
        return None
    scored = score_trace(trace, t_sol_ms, None, result.hardware)
    return (SPEED_OF_LIGHT_RULE, scored.note) if scored.status == IMPLAUSIBLE else None


def flag(session_factory: sessionmaker[Session], submission_id: int, reason: str, flagged_by: str) -> Hacked:
    """Flag a ranked submission as hacked, or replace the reason of its flag."""
    reason = reason.strip()
    if not reason:
        raise ServiceError("--reason: say why the submission is hacked (its author is shown it)")
    if len(reason) > MAX_REASON_CHARS:
        raise ServiceError(f"--reason: {len(reason)} characters, over the {MAX_REASON_CHARS} a reason may have")
    with session_factory.begin() as session:
        submission = _ranked(session, submission_id)
        row = session.get(SubmissionFlag, submission.id)
        if row is None:
            row = SubmissionFlag(submission_id=submission.id)
            session.add(row)
        row.reason, row.flagged_by, row.flagged_at = reason, flagged_by, utcnow()
        session.flush()
        state = hacked_state(session, submission)
        assert state is not None, "just flagged"
        return state


def unflag(session_factory: sessionmaker[Session], submission_id: int) -> Hacked | None:
    """Lift an admin's flag. Returns why the submission is still hacked (a guard or the floor flagged it: only a
    new evaluation, `solbench admin rescore`, changes that), or None when it is back on the boards."""
    with session_factory.begin() as session:
        submission = _ranked(session, submission_id)
        row = session.get(SubmissionFlag, submission.id)
        if row is None:
            raise ServiceError(f"ID {submission_id}: no admin flag to lift")
        session.delete(row)
        session.flush()
        return hacked_state(session, submission)


def flagged_submissions(session: Session, *, limit: int = 100) -> list[FlaggedSubmission]:
    """The newest `limit` hacked submissions (not deleted), with why each one is."""
    rows = session.execute(
        select(Submission, User.name, ServedProblem.name, ServedProblem.set_name)
        .join(User, User.id == Submission.user_id)
        .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
        .join(ServedProblem, ServedProblem.id == ProblemVersion.problem_id)
        .outerjoin(Result, Result.submission_id == Submission.id)
        .where(Submission.deleted_at.is_(None), queries.is_hacked())
        .order_by(Submission.id.desc())
        .limit(limit)
    ).all()
    listed = []
    for submission, user, problem, set_name in rows:
        state = hacked_state(session, submission)
        assert state is not None, "selected by queries.is_hacked"
        listed.append(
            FlaggedSubmission(
                id=submission.id,
                user=user,
                problem=problem,
                set=set_name,
                submitted_at=submission.created_at,
                hacked=state,
            )
        )
    return listed


def _ranked(session: Session, submission_id: int) -> Submission:
    submission = queries.live_submission(session, submission_id)
    if submission is None:
        raise UnknownSubmission(submission_id)
    if submission.mode != queries.RANKED:
        raise ServiceError(
            f"ID {submission_id}: a {submission.mode} submission is on no board; only ranked ones can be flagged"
        )
    return submission
