"""Read queries of the service: rankings, leaderboards, firsts, users and status; the API and the pages both call
these, so a ranking is computed one way only.

A ranked entry is a submission in mode ``ranked`` that finished (``done``), is not deleted and has a score.
A user's standing on a problem is their best such score (earliest wins a tie); on a set, the mean of
their best scores over the set's problems, a problem without a scored submission counting 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Select, and_, func, select
from sqlalchemy.orm import Session

from solbench.service.models import (Problem, ProblemSet, ProblemVersion, Result, ScoreChange, SolAnalysis, Submission,
                                     User, Worker, utcnow)

RANKED_MODE = "ranked"
PUBLIC_MODES = (RANKED_MODE,)
"""Modes whose submissions others may see; ``private`` and ``test`` ones are their owner's alone."""


def _ranked_entries() -> Select:
    """Scored ranked results joined to their submission and problem."""
    return (select(Submission.id.label("submission_id"), Submission.user_id, Submission.created_at,
                   Submission.finished_at, Result.score, Result.public_score, Result.held_out_score,
                   Result.harness_version, Problem.id.label("problem_id"), Problem.name.label("problem"),
                   Problem.set_name)
            .join(Result, Result.submission_id == Submission.id)
            .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
            .join(Problem, Problem.id == ProblemVersion.problem_id)
            .where(Submission.mode == RANKED_MODE, Submission.status == "done", Submission.deleted_at.is_(None),
                   Result.score.is_not(None)))


@dataclass(frozen=True)
class RankingEntry:
    rank: int
    user: str
    submission_id: int
    solution: str
    score: float
    public_score: float | None
    held_out_score: float | None
    submitted_at: datetime
    harness_version: str


def problem_ranking(session: Session, problem: str, *, offset: int = 0,
                    limit: int = 50) -> tuple[list[RankingEntry], int]:
    """Each user's best ranked submission on `problem`, best first: one page of it and the number of users."""
    entries = _ranked_entries().where(Problem.name == problem).add_columns(
        func.row_number().over(partition_by=Submission.user_id,
                               order_by=(Result.score.desc(), Submission.created_at, Submission.id)).label("nth"))
    best = entries.subquery()
    total = session.scalar(select(func.count()).select_from(best).where(best.c.nth == 1)) or 0
    rows = session.execute(
        select(best, User.name, Submission.solution["name"].as_string())
        .join(User, User.id == best.c.user_id).join(Submission, Submission.id == best.c.submission_id)
        .where(best.c.nth == 1).order_by(best.c.score.desc(), best.c.created_at, best.c.submission_id)
        .offset(offset).limit(limit)).all()
    return [RankingEntry(rank=offset + index + 1, user=row.name, submission_id=row.submission_id,
                         solution=row[-1] or "", score=row.score, public_score=row.public_score,
                         held_out_score=row.held_out_score, submitted_at=row.created_at,
                         harness_version=row.harness_version) for index, row in enumerate(rows)], total


@dataclass(frozen=True)
class SetStanding:
    rank: int
    user: str
    score: float
    problems_scored: int
    problems_total: int
    last_at: datetime | None


def set_leaderboard(session: Session, set_name: str, *, offset: int = 0,
                    limit: int = 50) -> tuple[list[SetStanding], int]:
    """Users by the mean of their best score per problem of `set_name` (0 where they have none)."""
    problems_total = session.scalar(select(func.count()).select_from(Problem).where(Problem.set_name == set_name)) or 0
    entries = _ranked_entries().where(Problem.set_name == set_name).subquery()
    best = (select(entries.c.user_id, entries.c.problem_id, func.max(entries.c.score).label("best"),
                   func.max(entries.c.created_at).label("last_at"))
            .group_by(entries.c.user_id, entries.c.problem_id).subquery())
    standing = (select(best.c.user_id, (func.sum(best.c.best) / max(problems_total, 1)).label("score"),
                       func.count().label("scored"), func.max(best.c.last_at).label("last_at"))
                .group_by(best.c.user_id).subquery())
    total = session.scalar(select(func.count()).select_from(standing)) or 0
    rows = session.execute(select(standing, User.name).join(User, User.id == standing.c.user_id)
                           .order_by(standing.c.score.desc(), standing.c.last_at, User.name)
                           .offset(offset).limit(limit)).all()
    return [SetStanding(rank=offset + index + 1, user=row.name, score=float(row.score), problems_scored=row.scored,
                        problems_total=problems_total, last_at=row.last_at) for index, row in enumerate(rows)], total


@dataclass(frozen=True)
class SetInfo:
    name: str
    title: str
    description: str
    frozen_at: datetime | None
    problems: int
    submissions: int


def problem_sets(session: Session) -> list[SetInfo]:
    """Every set that has problems, with its counts and its freeze date (None: open)."""
    problems = dict(session.execute(select(Problem.set_name, func.count()).group_by(Problem.set_name)).all())
    submissions = dict(session.execute(
        select(Problem.set_name, func.count()).select_from(Submission)
        .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
        .join(Problem, Problem.id == ProblemVersion.problem_id)
        .where(Submission.deleted_at.is_(None)).group_by(Problem.set_name)).all())
    described = {row.name: row for row in session.scalars(select(ProblemSet))}
    return [SetInfo(name=name, title=getattr(described.get(name), "title", "") or "",
                    description=getattr(described.get(name), "description", "") or "",
                    frozen_at=getattr(described.get(name), "frozen_at", None), problems=count,
                    submissions=submissions.get(name, 0)) for name, count in sorted(problems.items())]


def set_frozen_at(session: Session, set_name: str) -> datetime | None:
    """When `set_name` was frozen (its submissions' code became public), or None while it is open."""
    frozen = session.scalar(select(ProblemSet.frozen_at).where(ProblemSet.name == set_name))
    return frozen if frozen is not None and frozen <= utcnow() else None


def freeze_set(session: Session, set_name: str, at: datetime | None = None) -> None:
    """Freeze `set_name` now (or at `at`): from then on, the code of every submission to it is shown to all."""
    row = session.get(ProblemSet, set_name)
    if row is None:
        row = ProblemSet(name=set_name)
        session.add(row)
    row.frozen_at = at or utcnow()


@dataclass(frozen=True)
class ProblemEntry:
    name: str
    op_type: str
    workloads: int
    best_score: float | None
    best_user: str | None


def set_problems(session: Session, set_name: str) -> list[ProblemEntry]:
    """The problems of a set with their current version's size and the best ranked score on each."""
    versions = session.execute(
        select(Problem.name, ProblemVersion.definition["op_type"].as_string(), ProblemVersion.workloads)
        .join(ProblemVersion, and_(ProblemVersion.problem_id == Problem.id, ProblemVersion.is_current.is_(True)))
        .where(Problem.set_name == set_name).order_by(Problem.name)).all()
    entries = _ranked_entries().where(Problem.set_name == set_name).add_columns(
        func.row_number().over(partition_by=Problem.id,
                               order_by=(Result.score.desc(), Submission.created_at, Submission.id)).label("nth"))
    best = entries.subquery()
    leaders = {row.problem: (row.score, row.name) for row in session.execute(
        select(best.c.problem, best.c.score, User.name).join(User, User.id == best.c.user_id).where(best.c.nth == 1))}
    return [ProblemEntry(name=name, op_type=op_type or "", workloads=len(workloads or []),
                         best_score=leaders.get(name, (None, None))[0], best_user=leaders.get(name, (None, None))[1])
            for name, op_type, workloads in versions]


@dataclass(frozen=True)
class First:
    """A ranked submission that beat every earlier one on its problem when it finished."""

    when: datetime
    user: str
    set_name: str
    problem: str
    score: float
    previous_score: float | None
    submission_id: int


def firsts(session: Session, *, problem: str | None = None, limit: int = 20) -> list[First]:
    """The newest firsts (of one problem, or of all), newest first."""
    entries = _ranked_entries().add_columns(
        func.max(Result.score).over(partition_by=Problem.id, order_by=(Submission.finished_at, Submission.id),
                                    rows=(None, -1)).label("previous"))
    if problem is not None:
        entries = entries.where(Problem.name == problem)
    ordered = entries.subquery()
    rows = session.execute(
        select(ordered, User.name).join(User, User.id == ordered.c.user_id)
        .where((ordered.c.previous.is_(None)) | (ordered.c.score > ordered.c.previous))
        .order_by(ordered.c.finished_at.desc(), ordered.c.submission_id.desc()).limit(limit)).all()
    return [First(when=row.finished_at or row.created_at, user=row.name, set_name=row.set_name, problem=row.problem,
                  score=row.score, previous_score=row.previous, submission_id=row.submission_id) for row in rows]


@dataclass(frozen=True)
class SubmissionEntry:
    id: int
    user: str
    set_name: str
    problem: str
    mode: str
    status: str
    verdict: str | None
    score: float | None
    created_at: datetime


def user_submissions(session: Session, user: str, *, include_private: bool, offset: int = 0,
                     limit: int = 50) -> tuple[list[SubmissionEntry], int]:
    """A user's submissions, newest first; their private and test ones only when `include_private` (the owner)."""
    query = (select(Submission.id, Submission.mode, Submission.status, Submission.created_at, Result.verdict,
                    Result.score, Problem.name.label("problem"), Problem.set_name)
             .join(User, User.id == Submission.user_id)
             .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
             .join(Problem, Problem.id == ProblemVersion.problem_id)
             .outerjoin(Result, Result.submission_id == Submission.id)
             .where(User.name == user, Submission.deleted_at.is_(None)))
    if not include_private:
        query = query.where(Submission.mode.in_(PUBLIC_MODES))
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.execute(query.order_by(Submission.id.desc()).offset(offset).limit(limit)).all()
    return [SubmissionEntry(id=row.id, user=user, set_name=row.set_name, problem=row.problem, mode=row.mode,
                            status=row.status, verdict=row.verdict, score=row.score, created_at=row.created_at)
            for row in rows], total


def user_best_scores(session: Session, user: str) -> list[tuple[str, str, float]]:
    """(set, problem, best ranked score) of a user, best first."""
    entries = _ranked_entries().join(User, User.id == Submission.user_id).where(User.name == user).subquery()
    rows = session.execute(select(entries.c.set_name, entries.c.problem, func.max(entries.c.score).label("best"))
                           .group_by(entries.c.set_name, entries.c.problem).order_by(func.max(entries.c.score).desc()))
    return [(row.set_name, row.problem, row.best) for row in rows]


def score_history(session: Session, submission_id: int) -> list[ScoreChange]:
    """Rescores that changed a submission's result, oldest first."""
    return list(session.scalars(select(ScoreChange).where(ScoreChange.submission_id == submission_id)
                                .order_by(ScoreChange.at, ScoreChange.id)))


def sol_costs(session: Session, version_id: int, hardware: str) -> dict | None:
    """Per workload uuid the FLOPs, compulsory bytes and compute/memory times of the newest analysis, if stored."""
    row = session.scalar(select(SolAnalysis).where(SolAnalysis.problem_version_id == version_id,
                                                   func.upper(SolAnalysis.hardware) == hardware.upper())
                         .order_by(SolAnalysis.id.desc()).limit(1))
    return dict(row.costs) if row is not None and row.costs else None


def best_results(session: Session, problem: str, *, limit: int = 100) -> list[tuple[str, int, Result]]:
    """(user, submission id, result) of each user's best ranked submission on `problem`, best first."""
    entries, _ = problem_ranking(session, problem, limit=limit)
    results = {r.submission_id: r for r in session.scalars(
        select(Result).where(Result.submission_id.in_([e.submission_id for e in entries])))}
    return [(e.user, e.submission_id, results[e.submission_id]) for e in entries if e.submission_id in results]


def queue_counts(session: Session) -> dict[str, int]:
    """Submissions per status (queued, running, done, failed), deleted ones left out."""
    counts = dict(session.execute(select(Submission.status, func.count()).where(Submission.deleted_at.is_(None))
                                  .group_by(Submission.status)).all())
    return {status: counts.get(status, 0) for status in ("queued", "running", "done", "failed")}


def workers(session: Session) -> list[Worker]:
    return list(session.scalars(select(Worker).order_by(Worker.hardware, Worker.name)))


def per_hour(session: Session, *, hours: int = 48, finished: bool = True) -> list[tuple[datetime, int]]:
    """Submissions finished (or, with `finished=False`, created) per hour over the last `hours`, zeros included."""
    now = utcnow()
    start = (now - timedelta(hours=hours - 1)).replace(minute=0, second=0, microsecond=0)
    column = Submission.finished_at if finished else Submission.created_at
    counts: dict[datetime, int] = {}
    for (moment,) in session.execute(select(column).where(column >= start)):
        hour = moment.replace(minute=0, second=0, microsecond=0)
        counts[hour] = counts.get(hour, 0) + 1
    return [(start + timedelta(hours=h), counts.get(start + timedelta(hours=h), 0)) for h in range(hours)]


def totals(session: Session) -> dict[str, int]:
    since = utcnow() - timedelta(hours=24)
    return {"submissions": session.scalar(select(func.count()).select_from(Submission)
                                          .where(Submission.deleted_at.is_(None))) or 0,
            "users": session.scalar(select(func.count()).select_from(User)) or 0,
            "last_24h": session.scalar(select(func.count()).select_from(Submission)
                                       .where(Submission.finished_at >= since)) or 0,
            "queued": session.scalar(select(func.count()).select_from(Submission)
                                     .where(Submission.status.in_(("queued", "running")),
                                            Submission.deleted_at.is_(None))) or 0}
