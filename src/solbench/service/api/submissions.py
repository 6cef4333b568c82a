"""POST/GET/DELETE /submissions: accepting a solution at the door, reading its result, its bundle."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Header, HTTPException, Response
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from solbench.service import queries
from solbench.service.api.deps import current_user, optional_user, service, session
from solbench.service.api.schemas import (
    Deleted,
    ResultView,
    ScoreChangeView,
    SubmissionAccepted,
    SubmissionRequest,
    SubmissionView,
)
from solbench.service.catalog import current_version
from solbench.service.disclosure import visible_error, visible_traces
from solbench.service.door import Refused, check_static, code_hash, parse_solution
from solbench.service.hacked import hacked_state
from solbench.service.limits import LimitReached, check_limits
from solbench.service.models import ScoreChange, Submission, User, utcnow

router = APIRouter(tags=["submissions"])


@router.post(
    "/submissions", status_code=202, response_model=SubmissionAccepted, responses={401: {}, 413: {}, 422: {}, 429: {}}
)
def submit(
    body: SubmissionRequest,
    response: Response,
    user: User = Depends(current_user),
    db: Session = Depends(session),
    svc=Depends(service),
    idempotency_key: str | None = Header(default=None, max_length=200),
) -> SubmissionAccepted:
    """Queue a solution for evaluation. With an `Idempotency-Key` header, a repeated request returns the
    submission the first one made instead of a second one."""
    if idempotency_key:
        existing = _by_key(db, user, idempotency_key)
        if existing is not None:
            response.headers["Idempotent-Replayed"] = "true"
            return _accepted(db, existing)
    version = current_version(db, body.problem)
    if version is None:
        raise Refused("problem", f"unknown problem {body.problem!r} (GET /api/v1/problems lists them)")
    solution = parse_solution(body.solution, body.problem)
    check_static(solution)
    try:
        check_limits(db, user, body.mode, svc.settings.limits)
    except LimitReached as error:
        raise HTTPException(429, str(error), headers={"Retry-After": str(error.retry_after_s)}) from None
    submission = Submission(
        user_id=user.id,
        problem_version_id=version.id,
        mode=body.mode,
        status="queued",
        solution=solution.model_dump(mode="json", exclude_none=True),
        code_hash=code_hash(solution),
        idempotency_key=idempotency_key or None,
        attempts=0,
    )
    db.add(submission)
    try:
        db.commit()
    except IntegrityError:  # the same key, sent twice at once: the other request stored it
        db.rollback()
        existing = _by_key(db, user, idempotency_key) if idempotency_key else None
        if existing is None:
            raise
        response.headers["Idempotent-Replayed"] = "true"
        return _accepted(db, existing)
    if svc.queue is not None:
        svc.queue.submit(submission.id)
    response.headers["Location"] = f"/api/v1/submissions/{submission.id}"
    return _accepted(db, submission)


@router.get("/submissions/{submission_id}", response_model=SubmissionView, responses={404: {}})
def get_submission(
    submission_id: int, user: User | None = Depends(optional_user), db: Session = Depends(session)
) -> SubmissionView:
    """A submission with its result. Test, private and hacked submissions are readable by their owner and admins
    only, a banned user's by admins only (404 to others, as for a submission that does not exist; `hacked` tells
    them why it is off the boards);
    of a ranked one, until its problem set is frozen, others see neither the solution's code nor the text it
    produced (logs, failure lines, guard findings' details, the code hash)."""
    submission = readable(db, submission_id, user)
    return submission_view(db, submission, with_code=_code_visible(db, user, submission))


@router.delete("/submissions/{submission_id}", response_model=Deleted, responses={401: {}, 403: {}, 404: {}})
def delete_submission(submission_id: int, user: User = Depends(current_user), db: Session = Depends(session)):
    """Remove a submission (its owner or an admin): it leaves every page and leaderboard; a queued one is not run.
    It still counts towards the owner's rate limits."""
    submission = readable(db, submission_id, user)
    if submission.user_id != user.id and not user.is_admin:
        raise HTTPException(403, f"submission {submission_id}: only its owner or an admin may delete it")
    submission.deleted_at = utcnow()
    if submission.status == "queued":
        submission.status = "cancelled"
    db.commit()
    return Deleted(id=submission_id, deleted=True)


@router.get("/submissions/{submission_id}/bundle", responses={403: {}, 404: {}})
def bundle(submission_id: int, user: User | None = Depends(optional_user), db: Session = Depends(session)):
    """The download bundle: solution, problem version, traces with raw samples, environment (`solbench replay`).
    It holds the code: its owner's and admins' only, everyone's once the problem set is frozen."""
    from fastapi.responses import JSONResponse

    from solbench.service.bundle import make_bundle

    submission = readable(db, submission_id, user)
    if not _code_visible(db, user, submission):
        raise HTTPException(
            403,
            f"submission {submission_id}: the bundle holds the code; until its problem set "
            "is frozen only its owner or an admin may download it",
        )
    result = submission.result
    version = (
        submission.problem_version
        if result is None
        else db.get(type(submission.problem_version), result.problem_version_id)
    )
    return JSONResponse(
        make_bundle(submission, result, version),
        headers={"Content-Disposition": f'attachment; filename="submission-{submission_id}.bundle.json"'},
    )


def readable(db: Session, submission_id: int, user: User | None) -> Submission:
    """The submission if `user` may read it (`queries.is_readable`, the pages' rule too); to anyone else it does not
    exist: 404."""
    submission = _live(db, submission_id)
    if not queries.is_readable(db, submission, user.name if user is not None else None, bool(user and user.is_admin)):
        raise _missing(submission_id)
    return submission


def _code_visible(db: Session, user: User | None, submission: Submission) -> bool:
    return queries.code_visible(
        db, submission, user.name if user is not None else None, user is not None and user.is_admin
    )


def submission_view(db: Session, submission: Submission, *, with_code: bool = True) -> SubmissionView:
    """The submission as a reader sees it: without `with_code`, no code and no text its code produced
    (disclosure.py)."""
    result = submission.result
    result_view = None
    if result is not None:
        public = {w["uuid"] for w in submission.problem_version.workloads} | {
            t["workload"]["uuid"] for t in result.traces
        }
        history = db.scalars(
            select(ScoreChange).where(ScoreChange.submission_id == submission.id).order_by(ScoreChange.id)
        ).all()
        version = db.get(type(submission.problem_version), result.problem_version_id)
        assert version is not None, "a result's problem_version_id is a foreign key"
        result_view = ResultView(
            score=result.score,
            public_score=result.public_score,
            held_out_score=result.held_out_score,
            held_out_workloads=len(result.held_out_traces),
            verdict=result.verdict,
            harness_version=result.harness_version,
            problem_version=version.version_hash,
            hardware=result.hardware,
            device=result.device,
            worker=result.worker,
            environment=result.environment,
            clock=result.clock,
            cache_hit=result.cache_hit,
            t_sol_ms={k: v for k, v in result.t_sol_ms.items() if k in public},
            t_b_ms={k: v for k, v in result.t_b_ms.items() if k in public},
            traces=visible_traces(result.traces, with_code),
            created_at=result.created_at,
            rescored_at=result.rescored_at,
            history=[
                ScoreChangeView(
                    at=c.at,
                    old_score=c.old_score,
                    new_score=c.new_score,
                    old_harness=c.old_harness,
                    new_harness=c.new_harness,
                    reason=c.reason,
                )
                for c in history
            ],
        )
    version = submission.problem_version
    return SubmissionView(
        id=submission.id,
        user=submission.user.name,
        problem=version.problem.name,
        problem_version=version.version_hash,
        mode=submission.mode,
        status=submission.status,
        queue_position=queries.queue_position(db, submission),
        created_at=submission.created_at,
        started_at=submission.started_at,
        finished_at=submission.finished_at,
        attempts=submission.attempts,
        error=visible_error(submission.error, with_code),
        code_hash=submission.code_hash if with_code else None,
        solution=submission.solution if with_code else None,
        result=result_view,
        hacked=hacked_state(db, submission),
    )


def _live(db: Session, submission_id: int) -> Submission:
    submission = queries.live_submission(db, submission_id)
    if submission is None:
        raise _missing(submission_id)
    return submission


def _missing(submission_id: int) -> HTTPException:
    """One answer for a submission that does not exist and one the caller may not see: the difference would tell
    that another user's private or test submission exists."""
    return HTTPException(404, f"submission {submission_id}: no such submission")


def _by_key(db: Session, user: User, key: str) -> Submission | None:
    return db.scalar(select(Submission).where(Submission.user_id == user.id, Submission.idempotency_key == key))


def _accepted(db: Session, submission: Submission) -> SubmissionAccepted:
    version = submission.problem_version
    return SubmissionAccepted(
        id=submission.id,
        status=submission.status,
        queue_position=queries.queue_position(db, submission),
        problem=version.problem.name,
        problem_version=version.version_hash,
        mode=submission.mode,
        url=f"/api/v1/submissions/{submission.id}",
    )
