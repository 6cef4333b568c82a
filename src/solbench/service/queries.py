"""Every ranking the service shows comes from here: the API and the web pages both call these functions.

What counts is decided once, in `counts_on_board`: a ranked submission that finished with a score, not deleted,
from a user who is not banned, whose secret held-out run has passed, and that is not hacked (`is_hacked`: flagged
by a guard, by the speed-of-light floor or by an admin). The rules:

- a user's S on a problem is their best score on it; ties between users are broken by the earlier
  submission (the one that reached the score first);
- a set total is the mean over the set's problems of the user's best per-problem S, a problem the user
  has no score on counting 0: the scoring layer's one set-total rule (`solbench.scoring.set_total`) with
  ``missing="zero"`` (`SET_MISSING`), recorded in every board and standing that shows a total;
- the firsts history of a problem lists each submission that took first place, in time order: a score
  strictly above every earlier one.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict
from sqlalchemy import ColumnElement, and_, case, exists, func, or_, select
from sqlalchemy.orm import Session

from solbench.scoring import SetMissing, set_total
from solbench.service.models import (
    EnvCall,
    ProblemSet,
    ProblemVersion,
    Result,
    ScoreChange,
    ServedProblem,
    SolAnalysis,
    Submission,
    SubmissionFlag,
    User,
    Worker,
    utcnow,
)
from solbench.service.scoring import HACKED_VERDICTS
from solbench.service.times import UtcDateTime
from solbench.service.worker_hardware import HardwareFigures

SET_MISSING: SetMissing = "zero"
"""How a set total counts a problem of the set the user has no score on: 0, so solving more problems ranks higher
(the library's score reports leave such a problem out instead; `solbench.scoring.set_total`)."""
WORKER_ALIVE_S = 120.0
"""A worker that promises no heartbeat (a Celery worker waiting on its broker) counts as alive this long."""
MISSED_BEAT_GRACE_S = 1.0
"""A worker that promises heartbeats is gone once one beat is overdue: 2 intervals and this slack after its last."""


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class RankedScore(_Data):
    """One user's best score on one problem."""

    rank: int
    user: str
    problem: str
    score: float
    submission_id: int
    submitted_at: UtcDateTime
    harness_version: str
    """The harness release the score was measured with."""
    hardware: str


class FirstPlace(_Data):
    """A submission that took first place on a problem: its score beat every earlier one."""

    at: UtcDateTime
    user: str
    score: float
    submission_id: int


class ProblemBoard(_Data):
    problem: str
    set: str
    entries: list[RankedScore]
    firsts: list[FirstPlace]


class SetRow(_Data):
    rank: int
    user: str
    total: float
    """Mean over the set's problems of the user's best S (a problem without a score counts 0: the board's
    `missing`)."""
    problems_scored: int
    scores: dict[str, float]
    """Problem name -> the user's best S on it (problems without a score are absent)."""


class SetBoard(_Data):
    set: str
    problems: list[str]
    rows: list[SetRow]
    missing: SetMissing = SET_MISSING
    """How each row's total counts a problem the user has no score on (``zero``: as 0; scoring.set_total)."""


class ProblemSummary(_Data):
    name: str
    set: str
    version: str
    workloads: int
    ranked_users: int
    best_score: float | None
    best_user: str | None


class SetStanding(_Data):
    set: str
    rank: int
    total: float
    users: int
    missing: SetMissing = SET_MISSING
    """How `total` counts a problem the user has no score on (``zero``: as 0; scoring.set_total)."""


class UserSubmission(_Data):
    id: int
    problem: str
    mode: str
    status: str
    score: float | None
    verdict: str | None
    submitted_at: UtcDateTime


class UserPage(_Data):
    name: str
    joined: UtcDateTime
    sets: list[SetStanding]
    best: list[RankedScore]
    """The user's best score per problem, with its rank on that problem."""
    submissions: list[UserSubmission]
    """Newest first; other viewers see only ranked submissions that are not hacked."""


class WorkerStatus(_Data):
    name: str
    hardware: str
    device: str
    last_seen: UtcDateTime
    alive: bool
    running: int | None
    evaluations: int
    figures: HardwareFigures | None = None
    """The worker's own figures for its hardware (None from a worker that could not resolve it)."""


class StatusData(_Data):
    queue_depth: int
    """Submissions waiting for a worker."""
    running: int
    env_calls_queued: int
    """Agent env calls waiting for a worker (the same workers run them)."""
    env_calls_running: int
    workers: list[WorkerStatus]
    evaluations_last_hour: int
    evaluations_last_day: int
    """Finished in the last 24 hours."""
    problems: int
    users: int


RANKED = "ranked"


def is_hacked() -> ColumnElement[bool]:
    """SQL over Submission (and Result, which may be outer-joined and absent): a ranked submission that a guard
    (verdict REWARD_HACK), the speed-of-light floor (IMPLAUSIBLE) or an admin (a SubmissionFlag) marked hacked.
    False, never NULL, where no result exists yet, so its negation keeps such submissions."""
    flagged = exists(select(SubmissionFlag.submission_id).where(SubmissionFlag.submission_id == Submission.id))
    by_verdict = and_(Result.verdict.is_not(None), Result.verdict.in_(HACKED_VERDICTS))
    return and_(Submission.mode == RANKED, or_(by_verdict, flagged))


def counts_on_board() -> tuple[ColumnElement[bool], ...]:
    """THE rule of what a ranking counts, over Submission, Result and User: every board, total, first place and
    best score of this module filters by it: what every reader may read (`readable_by_anyone`), finished, scored."""
    return (
        *readable_by_anyone(),
        Submission.status == "done",
        Submission.deleted_at.is_(None),
        Result.score.is_not(None),
        Result.held_out_passed.is_(True),  # only once the secret held-out run passed (scoring.held_out_run_passed)
    )


def _scored_rows(
    session: Session, *, problem: str | None = None, set_name: str | None = None, user: str | None = None
) -> list[tuple]:
    """(problem, set, user, score, submission id, created_at, harness, hardware) of every counting result, in
    submission order."""
    query = (
        select(
            ServedProblem.name,
            ServedProblem.set_name,
            User.name,
            Result.score,
            Submission.id,
            Submission.created_at,
            Result.harness_version,
            Result.hardware,
        )
        .select_from(Submission)
        .join(Result, Result.submission_id == Submission.id)
        .join(User, User.id == Submission.user_id)
        .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
        .join(ServedProblem, ServedProblem.id == ProblemVersion.problem_id)
        .where(*counts_on_board())
        .order_by(Submission.created_at, Submission.id)
    )
    if problem is not None:
        query = query.where(ServedProblem.name == problem)
    if set_name is not None:
        query = query.where(ServedProblem.set_name == set_name)
    if user is not None:
        query = query.where(User.name == user)
    return list(session.execute(query).all())


def _best_per_user(rows: list[tuple]) -> dict[tuple[str, str], tuple]:
    """(problem, user) -> the row of the user's best score; in submission order, so `>` keeps the earlier tie."""
    best: dict[tuple[str, str], tuple] = {}
    for row in rows:
        key = (row[0], row[2])
        if key not in best or row[3] > best[key][3]:
            best[key] = row
    return best


def _ranked(rows: list[tuple]) -> list[RankedScore]:
    """Best rows of one problem, ranked: higher score first, then the earlier submission."""
    ordered = sorted(rows, key=lambda r: (-r[3], r[5], r[4]))
    return [
        RankedScore(
            rank=i + 1,
            problem=r[0],
            user=r[2],
            score=r[3],
            submission_id=r[4],
            submitted_at=r[5],
            harness_version=r[6],
            hardware=r[7],
        )
        for i, r in enumerate(ordered)
    ]


def problem_leaderboard(session: Session, name: str) -> ProblemBoard | None:
    """Best score per user on problem `name`, ranked, and its firsts history; None for an unknown problem."""
    problem = session.scalar(select(ServedProblem).where(ServedProblem.name == name))
    if problem is None:
        return None
    rows = _scored_rows(session, problem=name)
    firsts: list[FirstPlace] = []
    for row in rows:
        if not firsts or row[3] > firsts[-1].score:
            firsts.append(FirstPlace(at=row[5], user=row[2], score=row[3], submission_id=row[4]))
    return ProblemBoard(
        problem=name, set=problem.set_name, entries=_ranked(list(_best_per_user(rows).values())), firsts=firsts
    )


def set_problems(session: Session, set_name: str) -> list[str]:
    return list(
        session.scalars(
            select(ServedProblem.name).where(ServedProblem.set_name == set_name).order_by(ServedProblem.name)
        )
    )


def set_names(session: Session) -> list[str]:
    return list(session.scalars(select(ServedProblem.set_name).distinct().order_by(ServedProblem.set_name)))


def set_leaderboard(session: Session, set_name: str) -> SetBoard | None:
    """Per-user totals over the set's problems; None for a set with no problems."""
    problems = set_problems(session, set_name)
    if not problems:
        return None
    return SetBoard(
        set=set_name,
        problems=problems,
        rows=_set_rows(problems, _best_per_user(_scored_rows(session, set_name=set_name))),
    )


def _set_rows(problems: list[str], best: dict[tuple[str, str], tuple]) -> list[SetRow]:
    """Per-user totals over `problems` from the best rows of the set's problems, ranked."""
    per_user: dict[str, dict[str, tuple]] = defaultdict(dict)
    for (problem, user), row in best.items():
        per_user[user][problem] = row
    totals = []
    for user, scores in per_user.items():
        total = set_total([scores[p][3] if p in scores else None for p in problems], missing=SET_MISSING)
        reached = max(row[5] for row in scores.values())  # when the user's standing was complete
        totals.append((user, total, reached, scores))
    totals.sort(key=lambda t: (-t[1], t[2], t[0]))
    return [
        SetRow(
            rank=i + 1,
            user=user,
            total=total,
            problems_scored=len(scores),
            scores={p: row[3] for p, row in sorted(scores.items())},
        )
        for i, (user, total, _, scores) in enumerate(totals)
    ]


def list_problems(session: Session) -> list[ProblemSummary]:
    best = _best_per_user(_scored_rows(session))
    by_problem: dict[str, list[tuple]] = defaultdict(list)
    for (problem, _), row in best.items():
        by_problem[problem].append(row)
    summaries = []
    query = (
        select(ServedProblem, ProblemVersion)
        .join(ProblemVersion, ProblemVersion.problem_id == ServedProblem.id)
        .where(ProblemVersion.is_current.is_(True))
        .order_by(ServedProblem.set_name, ServedProblem.name)
    )
    for problem, version in session.execute(query).all():
        ranked = _ranked(by_problem.get(problem.name, []))
        summaries.append(
            ProblemSummary(
                name=problem.name,
                set=problem.set_name,
                version=version.version_hash[:16],
                workloads=len(version.workloads),
                ranked_users=len(ranked),
                best_score=ranked[0].score if ranked else None,
                best_user=ranked[0].user if ranked else None,
            )
        )
    return summaries


def user_page(session: Session, name: str, *, viewer: User | None = None) -> UserPage | None:
    """A user's standings, best scores and submissions; None for an unknown or banned user (admins see banned
    ones). `viewer` decides whether non-ranked submissions are listed (the user themself, or an admin)."""
    user = session.scalar(select(User).where(User.name == name))
    privileged = viewer is not None and (viewer.is_admin or viewer.id == (user.id if user else None))
    if user is None or (user.banned and not (viewer is not None and viewer.is_admin)):
        return None
    everyone = _best_per_user(_scored_rows(session))  # one scan ranks the user everywhere (fast with many problems)
    best_rows = [row for (_, user_name), row in everyone.items() if user_name == name]
    best = []
    for row in sorted(best_rows, key=lambda r: r[0]):
        entries = _ranked([r for (problem, _), r in everyone.items() if problem == row[0]])
        rank = next((e.rank for e in entries if e.user == name), 0)
        best.append(
            RankedScore(
                rank=rank,
                problem=row[0],
                user=name,
                score=row[3],
                submission_id=row[4],
                submitted_at=row[5],
                harness_version=row[6],
                hardware=row[7],
            )
        )
    sets = []
    for set_name in sorted({row[1] for row in best_rows}):
        rows = _set_rows(set_problems(session, set_name), {key: r for key, r in everyone.items() if r[1] == set_name})
        row = next((r for r in rows if r.user == name), None)
        if row is not None:
            sets.append(SetStanding(set=set_name, rank=row.rank, total=row.total, users=len(rows)))
    query = (
        select(Submission, ServedProblem.name, Result.score, Result.verdict)
        .select_from(Submission)
        .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
        .join(ServedProblem, ServedProblem.id == ProblemVersion.problem_id)
        .join(User, User.id == Submission.user_id)
        .outerjoin(Result, Result.submission_id == Submission.id)
        .where(Submission.user_id == user.id, Submission.deleted_at.is_(None))
        .order_by(Submission.id.desc())
        .limit(100)
    )
    if not privileged:
        query = query.where(*readable_by_anyone())
    submissions = [
        UserSubmission(
            id=s.id,
            problem=problem,
            mode=s.mode,
            status=s.status,
            score=score,
            verdict=verdict,
            submitted_at=s.created_at,
        )
        for s, problem, score, verdict in session.execute(query).all()
    ]
    return UserPage(name=user.name, joined=user.created_at, sets=sets, best=best, submissions=submissions)


def queue_in_turns():
    """The running and queued submissions with their `turn`, the order workers take them in (by turn, then id).
    Authors take turns: a submission's turn is its place among its author's running and queued submissions (running
    ones first), so one author's many waiting submissions, or one whose job runs to every workload's timeout, do not
    hold the workers while another author's first one waits."""
    return (
        select(
            Submission.id,
            Submission.created_at,
            Submission.status,
            func.row_number()
            .over(
                partition_by=Submission.user_id,
                order_by=(case((Submission.status == "running", 0), else_=1), Submission.id),
            )
            .label("turn"),
        )
        .where(Submission.status.in_(("queued", "running")), Submission.deleted_at.is_(None))
        .subquery()
    )


def queue_position(session: Session, submission: Submission) -> int:
    """1 for the next job to run (`queue_in_turns`' order); 0 when the submission is not waiting."""
    if submission.status != "queued" or submission.deleted_at is not None:
        return 0
    order = queue_in_turns()
    own = session.execute(select(order.c.turn).where(order.c.id == submission.id)).scalar()
    if own is None:
        return 0
    ahead = (order.c.turn < own) | ((order.c.turn == own) & (order.c.id < submission.id))
    return 1 + (session.scalar(select(func.count()).select_from(order).where(order.c.status == "queued", ahead)) or 0)


def worker_alive(worker: Worker, now: datetime) -> bool:
    """Gone once it was seen to stop, or once a promised heartbeat is one interval overdue."""
    if worker.stopped_at is not None:
        return False
    age = (now - worker.last_seen).total_seconds()
    heartbeat_s = worker.heartbeat_s
    if heartbeat_s and (worker.current_submission_id is not None or worker.beats_when_idle):  # beats promised
        return age < 2 * heartbeat_s + MISSED_BEAT_GRACE_S
    return age < WORKER_ALIVE_S


def _worker_status(worker: Worker, alive: bool) -> WorkerStatus:
    return WorkerStatus(
        name=worker.name,
        hardware=worker.hardware,
        device=worker.device,
        last_seen=worker.last_seen,
        alive=alive,
        running=worker.current_submission_id if alive else None,  # a dead worker runs nothing
        evaluations=worker.evaluations or 0,
        figures=HardwareFigures.model_validate(worker.hardware_figures) if worker.hardware_figures else None,
    )


def status(session: Session) -> StatusData:
    now = utcnow()

    def count(*where) -> int:
        return session.scalar(select(func.count()).select_from(Submission).where(*where)) or 0

    finished = select(func.count()).select_from(Result)
    last_hour = session.scalar(finished.where(Result.created_at >= now - timedelta(hours=1))) or 0
    last_day = session.scalar(finished.where(Result.created_at >= now - timedelta(hours=24))) or 0
    workers = [_worker_status(w, worker_alive(w, now)) for w in session.scalars(select(Worker).order_by(Worker.name))]
    calls = {
        status: n
        for status, n in session.execute(
            select(EnvCall.status, func.count())
            .where(EnvCall.status.in_(("queued", "running")))
            .group_by(EnvCall.status)
        )
    }
    return StatusData(
        queue_depth=count(Submission.status == "queued", Submission.deleted_at.is_(None)),
        running=count(Submission.status == "running", Submission.deleted_at.is_(None)),
        env_calls_queued=calls.get("queued", 0),
        env_calls_running=calls.get("running", 0),
        workers=workers,
        evaluations_last_hour=last_hour,
        evaluations_last_day=last_day,
        problems=session.scalar(select(func.count()).select_from(ServedProblem)) or 0,
        users=session.scalar(select(func.count()).select_from(User)) or 0,
    )


# --- for the web pages: sets and their freeze date, recent firsts, paginated submissions, activity ---------------


class SetInfo(_Data):
    name: str
    title: str
    description: str
    frozen_at: datetime | None
    """From then on the code of every submission to the set is public; None while the set is open."""
    problems: int
    submissions: int


def problem_sets(session: Session) -> list[SetInfo]:
    """Every set that has problems, with its problem and submission counts and its freeze date."""
    problems = dict(
        session.execute(select(ServedProblem.set_name, func.count()).group_by(ServedProblem.set_name)).all()
    )
    submissions = dict(
        session.execute(
            select(ServedProblem.set_name, func.count())
            .select_from(Submission)
            .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
            .join(ServedProblem, ServedProblem.id == ProblemVersion.problem_id)
            .where(Submission.deleted_at.is_(None))
            .group_by(ServedProblem.set_name)
        ).all()
    )
    described = {row.name: row for row in session.scalars(select(ProblemSet))}
    now = utcnow()
    infos = []
    for name, count in sorted(problems.items()):
        row = described.get(name)
        frozen = row.frozen_at if row is not None and row.frozen_at is not None and row.frozen_at <= now else None
        infos.append(
            SetInfo(
                name=name,
                title=row.title if row else "",
                description=row.description if row else "",
                frozen_at=frozen,
                problems=count,
                submissions=submissions.get(name, 0),
            )
        )
    return infos


def sets_of_problems(session: Session) -> dict[str, str]:
    """Problem name -> its set, for linking a problem where only its name is at hand."""
    return dict(session.execute(select(ServedProblem.name, ServedProblem.set_name)).all())


def set_frozen_at(session: Session, set_name: str) -> datetime | None:
    """When `set_name` was frozen, or None while it is open (a freeze date in the future is not yet a freeze)."""
    frozen = session.scalar(select(ProblemSet.frozen_at).where(ProblemSet.name == set_name))
    return frozen if frozen is not None and frozen <= utcnow() else None


MAX_ROW_ID = 2**63 - 1
"""The largest primary key SQLite and PostgreSQL store (a signed 64-bit integer): a larger id names no row."""


def live_submission(session: Session, submission_id: int) -> Submission | None:
    """The submission with this id unless it was deleted; None for an id no row can have (it would overflow the
    database's integer, an error instead of a miss)."""
    if not 0 < submission_id <= MAX_ROW_ID:
        return None
    row = session.get(Submission, submission_id)
    return None if row is None or row.deleted_at is not None else row


def readable_by_anyone() -> tuple[ColumnElement[bool], ...]:
    """THE rule of which submissions exist for every reader, over Submission, Result (outer-joined) and User: ranked
    ones of users who are not banned that are not hacked. The rest (test and private ones, a banned user's, hacked
    ones) exist for their author and admins only: to anyone else they are "no such submission", in the API, the
    pages and the user listings alike (`is_readable`)."""
    return (Submission.mode == RANKED, User.banned.is_(False), ~is_hacked())


def is_readable(session: Session, submission: Submission, viewer_name: str | None, viewer_is_admin: bool) -> bool:
    """Whether a viewer may read `submission` at all (its code is `code_visible`'s question): its author and admins
    always, anyone else by `readable_by_anyone`. The one rule the API (submission view, bundle) and the pages share."""
    if viewer_is_admin or (viewer_name is not None and viewer_name == submission.user.name):
        return True
    found = session.scalar(
        select(Submission.id)
        .join(User, User.id == Submission.user_id)
        .outerjoin(Result, Result.submission_id == Submission.id)
        .where(Submission.id == submission.id, *readable_by_anyone())
    )
    return found is not None


def code_visible(session: Session, submission: Submission, viewer_name: str | None, viewer_is_admin: bool) -> bool:
    """Whether a viewer may read a submission's code: its author and admins always, everyone else once the
    submission's problem set is frozen. The one rule the API (submission view, bundle) and the pages share."""
    if viewer_is_admin or (viewer_name is not None and viewer_name == submission.user.name):
        return True
    return set_frozen_at(session, submission.problem_version.problem.set_name) is not None


def freeze_set(session: Session, set_name: str, at: datetime | None = None, *, title: str | None = None) -> None:
    """Freeze `set_name` now (or at `at`): from then on the code of every submission to it is shown to everyone."""
    row = session.get(ProblemSet, set_name)
    if row is None:
        row = ProblemSet(name=set_name, title="", description="")
        session.add(row)
    row.frozen_at = at or utcnow()
    if title is not None:
        row.title = title


class RecentFirst(_Data):
    problem: str
    set: str
    at: datetime
    user: str
    score: float
    previous: float | None
    """The best score before this one (None: the problem's first score)."""
    submission_id: int


def recent_firsts(session: Session, *, limit: int = 10) -> list[RecentFirst]:
    """The newest first places over all problems, by the same rule as `problem_leaderboard`'s firsts."""
    best: dict[str, float] = {}
    found: list[RecentFirst] = []
    for row in _scored_rows(session):
        previous = best.get(row[0])
        if previous is None or row[3] > previous:
            best[row[0]] = row[3]
            found.append(
                RecentFirst(
                    problem=row[0],
                    set=row[1],
                    at=row[5],
                    user=row[2],
                    score=row[3],
                    previous=previous,
                    submission_id=row[4],
                )
            )
    return sorted(found, key=lambda f: (f.at, f.submission_id), reverse=True)[:limit]


def user_submissions(
    session: Session, name: str, *, include_private: bool, offset: int = 0, limit: int = 50
) -> tuple[list[UserSubmission], int]:
    """One page of a user's submissions, newest first, and how many there are; their private, test and hacked ones
    only when `include_private` (the user themself, or an admin)."""
    query = (
        select(Submission, ServedProblem.name, Result.score, Result.verdict)
        .select_from(Submission)
        .join(User, User.id == Submission.user_id)
        .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
        .join(ServedProblem, ServedProblem.id == ProblemVersion.problem_id)
        .outerjoin(Result, Result.submission_id == Submission.id)
        .where(User.name == name, Submission.deleted_at.is_(None))
    )
    if not include_private:
        query = query.where(*readable_by_anyone())
    total = session.scalar(select(func.count()).select_from(query.with_only_columns(Submission.id).subquery())) or 0
    rows = session.execute(query.order_by(Submission.id.desc()).offset(offset).limit(limit)).all()
    return [
        UserSubmission(
            id=s.id,
            problem=problem,
            mode=s.mode,
            status=s.status,
            score=score,
            verdict=verdict,
            submitted_at=s.created_at,
        )
        for s, problem, score, verdict in rows
    ], total


def per_hour(session: Session, *, hours: int = 48, finished: bool = True) -> list[tuple[datetime, int]]:
    """Submissions finished (`finished`) or made per hour over the last `hours` hours, empty hours included."""
    start = (utcnow() - timedelta(hours=hours - 1)).replace(minute=0, second=0, microsecond=0)
    column = Submission.finished_at if finished else Submission.created_at
    counts: dict[datetime, int] = defaultdict(int)
    for (moment,) in session.execute(select(column).where(column >= start)):
        assert moment is not None, "NULL is never >= start"
        counts[moment.replace(minute=0, second=0, microsecond=0)] += 1
    return [(start + timedelta(hours=h), counts.get(start + timedelta(hours=h), 0)) for h in range(hours)]


def sol_analysis(session: Session, version_id: int, hardware: str) -> SolAnalysis | None:
    """The newest stored SOL analysis of a problem version on `hardware` (T_SOL, and costs where it kept them)."""
    return session.scalar(
        select(SolAnalysis)
        .where(SolAnalysis.problem_version_id == version_id, func.upper(SolAnalysis.hardware) == hardware.upper())
        .order_by(SolAnalysis.id.desc())
        .limit(1)
    )


def score_changes(session: Session, submission_id: int) -> list[ScoreChange]:
    """Rescores that changed a submission's result, oldest first."""
    return list(
        session.scalars(
            select(ScoreChange)
            .where(ScoreChange.submission_id == submission_id)
            .order_by(ScoreChange.at, ScoreChange.id)
        )
    )
