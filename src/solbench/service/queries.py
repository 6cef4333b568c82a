"""Every ranking the service shows comes from here: the API and the web pages both call these functions.

Only ranked submissions that finished with a score count, from users who are not banned and
submissions not deleted. The rules:

- a user's S on a problem is their best score on it; ties between users are broken by the earlier
  submission (the one that reached the score first);
- a set total is the mean over the set's problems of the user's best per-problem S, a problem the user
  has no score on counting 0;
- the firsts history of a problem lists each submission that took first place, in time order: a score
  strictly above every earlier one.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from solbench.service.times import UtcDateTime

from pydantic import BaseModel, ConfigDict
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from solbench.service.models import Problem, ProblemVersion, Result, Submission, User, Worker, utcnow

WORKER_ALIVE_S = 120.0
"""A worker seen within this many seconds counts as alive on the status page."""


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
    """Mean over the set's problems of the user's best S (a problem without a score counts 0)."""
    problems_scored: int
    scores: dict[str, float]
    """Problem name -> the user's best S on it (problems without a score are absent)."""


class SetBoard(_Data):
    set: str
    problems: list[str]
    rows: list[SetRow]


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
    """Newest first; other viewers see only ranked submissions."""


class WorkerStatus(_Data):
    name: str
    hardware: str
    device: str
    last_seen: UtcDateTime
    alive: bool
    running: int | None
    evaluations: int


class StatusData(_Data):
    queue_depth: int
    """Submissions waiting for a worker."""
    running: int
    workers: list[WorkerStatus]
    evaluations_last_hour: int
    evaluations_per_hour: float
    """Mean over the last 24 hours."""
    problems: int
    users: int


def _scored_rows(session: Session, *, problem: str | None = None, set_name: str | None = None,
                 user: str | None = None) -> list[tuple]:
    """(problem, set, user, score, submission id, created_at, harness, hardware) of every counting result, in
    submission order."""
    query = (select(Problem.name, Problem.set_name, User.name, Result.score, Submission.id, Submission.created_at,
                    Result.harness_version, Result.hardware)
             .select_from(Submission)
             .join(Result, Result.submission_id == Submission.id)
             .join(User, User.id == Submission.user_id)
             .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
             .join(Problem, Problem.id == ProblemVersion.problem_id)
             .where(Submission.mode == "ranked", Submission.status == "done", Submission.deleted_at.is_(None),
                    User.banned.is_(False), Result.score.is_not(None))
             .order_by(Submission.created_at, Submission.id))
    if problem is not None:
        query = query.where(Problem.name == problem)
    if set_name is not None:
        query = query.where(Problem.set_name == set_name)
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
    return [RankedScore(rank=i + 1, problem=r[0], user=r[2], score=r[3], submission_id=r[4], submitted_at=r[5],
                        harness_version=r[6], hardware=r[7]) for i, r in enumerate(ordered)]


def problem_leaderboard(session: Session, name: str) -> ProblemBoard | None:
    """Best score per user on problem `name`, ranked, and its firsts history; None for an unknown problem."""
    problem = session.scalar(select(Problem).where(Problem.name == name))
    if problem is None:
        return None
    rows = _scored_rows(session, problem=name)
    firsts: list[FirstPlace] = []
    for row in rows:
        if not firsts or row[3] > firsts[-1].score:
            firsts.append(FirstPlace(at=row[5], user=row[2], score=row[3], submission_id=row[4]))
    return ProblemBoard(problem=name, set=problem.set_name, entries=_ranked(list(_best_per_user(rows).values())),
                        firsts=firsts)


def set_problems(session: Session, set_name: str) -> list[str]:
    return list(session.scalars(select(Problem.name).where(Problem.set_name == set_name).order_by(Problem.name)))


def set_names(session: Session) -> list[str]:
    return list(session.scalars(select(Problem.set_name).distinct().order_by(Problem.set_name)))


def set_leaderboard(session: Session, set_name: str) -> SetBoard | None:
    """Per-user totals over the set's problems; None for a set with no problems."""
    problems = set_problems(session, set_name)
    if not problems:
        return None
    best = _best_per_user(_scored_rows(session, set_name=set_name))
    per_user: dict[str, dict[str, tuple]] = defaultdict(dict)
    for (problem, user), row in best.items():
        per_user[user][problem] = row
    totals = []
    for user, scores in per_user.items():
        total = sum(row[3] for row in scores.values()) / len(problems)
        reached = max(row[5] for row in scores.values())  # when the user's standing was complete
        totals.append((user, total, reached, scores))
    totals.sort(key=lambda t: (-t[1], t[2], t[0]))
    rows = [SetRow(rank=i + 1, user=user, total=total, problems_scored=len(scores),
                   scores={p: row[3] for p, row in sorted(scores.items())})
            for i, (user, total, _, scores) in enumerate(totals)]
    return SetBoard(set=set_name, problems=problems, rows=rows)


def list_problems(session: Session) -> list[ProblemSummary]:
    best = _best_per_user(_scored_rows(session))
    by_problem: dict[str, list[tuple]] = defaultdict(list)
    for (problem, _), row in best.items():
        by_problem[problem].append(row)
    summaries = []
    query = (select(Problem, ProblemVersion).join(ProblemVersion, ProblemVersion.problem_id == Problem.id)
             .where(ProblemVersion.is_current.is_(True)).order_by(Problem.set_name, Problem.name))
    for problem, version in session.execute(query).all():
        ranked = _ranked(by_problem.get(problem.name, []))
        summaries.append(ProblemSummary(name=problem.name, set=problem.set_name, version=version.version_hash[:16],
                                        workloads=len(version.workloads), ranked_users=len(ranked),
                                        best_score=ranked[0].score if ranked else None,
                                        best_user=ranked[0].user if ranked else None))
    return summaries


def user_page(session: Session, name: str, *, viewer: User | None = None) -> UserPage | None:
    """A user's standings, best scores and submissions; None for an unknown or banned user (admins see banned
    ones). `viewer` decides whether non-ranked submissions are listed (the user themself, or an admin)."""
    user = session.scalar(select(User).where(User.name == name))
    privileged = viewer is not None and (viewer.is_admin or viewer.id == (user.id if user else None))
    if user is None or (user.banned and not (viewer is not None and viewer.is_admin)):
        return None
    best_rows = list(_best_per_user(_scored_rows(session, user=name)).values())
    best = []
    for row in sorted(best_rows, key=lambda r: r[0]):
        board = problem_leaderboard(session, row[0])
        rank = next((e.rank for e in board.entries if e.user == name), 0) if board else 0
        best.append(RankedScore(rank=rank, problem=row[0], user=name, score=row[3], submission_id=row[4],
                                submitted_at=row[5], harness_version=row[6], hardware=row[7]))
    sets = []
    for set_name in sorted({row[1] for row in best_rows}):
        board = set_leaderboard(session, set_name)
        row = next((r for r in board.rows if r.user == name), None) if board else None
        if row is not None:
            sets.append(SetStanding(set=set_name, rank=row.rank, total=row.total, users=len(board.rows)))
    query = (select(Submission, Problem.name, Result.score, Result.verdict).select_from(Submission)
             .join(ProblemVersion, ProblemVersion.id == Submission.problem_version_id)
             .join(Problem, Problem.id == ProblemVersion.problem_id)
             .outerjoin(Result, Result.submission_id == Submission.id)
             .where(Submission.user_id == user.id, Submission.deleted_at.is_(None))
             .order_by(Submission.id.desc()).limit(100))
    if not privileged:
        query = query.where(Submission.mode == "ranked")
    submissions = [UserSubmission(id=s.id, problem=problem, mode=s.mode, status=s.status, score=score,
                                  verdict=verdict, submitted_at=s.created_at)
                   for s, problem, score, verdict in session.execute(query).all()]
    return UserPage(name=user.name, joined=user.created_at, sets=sets, best=best, submissions=submissions)


def queue_position(session: Session, submission: Submission) -> int:
    """1 for the next job to run; 0 when the submission is not waiting."""
    if submission.status != "queued":
        return 0
    return session.scalar(select(func.count()).select_from(Submission).where(
        Submission.status == "queued", Submission.deleted_at.is_(None), Submission.id <= submission.id)) or 0


def status(session: Session) -> StatusData:
    now = utcnow()

    def count(*where) -> int:
        return session.scalar(select(func.count()).select_from(Submission).where(*where)) or 0

    finished = select(func.count()).select_from(Result)
    last_hour = session.scalar(finished.where(Result.created_at >= now - timedelta(hours=1))) or 0
    last_day = session.scalar(finished.where(Result.created_at >= now - timedelta(hours=24))) or 0
    workers = [WorkerStatus(name=w.name, hardware=w.hardware, device=w.device, last_seen=w.last_seen,
                            alive=(now - w.last_seen).total_seconds() < WORKER_ALIVE_S,
                            running=w.current_submission_id, evaluations=w.evaluations or 0)
               for w in session.scalars(select(Worker).order_by(Worker.name))]
    return StatusData(queue_depth=count(Submission.status == "queued", Submission.deleted_at.is_(None)),
                      running=count(Submission.status == "running", Submission.deleted_at.is_(None)),
                      workers=workers, evaluations_last_hour=last_hour, evaluations_per_hour=last_day / 24,
                      problems=session.scalar(select(func.count()).select_from(Problem)) or 0,
                      users=session.scalar(select(func.count()).select_from(User)) or 0)
