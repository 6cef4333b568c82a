"""Each page's content: read through the query module, turned into view values and charts.

Visibility is decided here, once: others' private and test submissions do not exist for a viewer
(not found), and the code of someone else's submission is shown only once its set is frozen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from solbench.service import queries
from solbench.service.catalog import current_version
from solbench.service.disclosure import visible_error, visible_traces
from solbench.service.hacked import flagged_submissions, hacked_state
from solbench.service.models import Result, Submission, User, utcnow
from solbench.service.web import views
from solbench.service.web.charts import (
    Bar,
    TimelineEvent,
    TimingSpread,
    TrendPoint,
    bar_chart,
    firsts_timeline,
    roofline_chart,
    timing_spread_chart,
    trend_chart,
)
from solbench.service.web.reach_view import reach_section
from solbench.service.web.roofline_data import problem_roofline
from solbench.service.web.svg import empty_chart
from solbench.service.web.traces_view import findings_of, workload_rows
from solbench.spec.solution import SourceFile

ACTIVITY_HOURS = 48
CHART_ROWS = 20
ROOFLINE_POINTS = 100
"""Users' best submissions drawn on a problem's roofline (the top of the ranking)."""
RANKED_MODE = "ranked"
FLAGGED_ROWS = 50
"""Hacked submissions listed on the status page for admins (the newest; the API lists more)."""


class PageNotFound(LookupError):
    """The page's subject does not exist, or the viewer may not see it (said the same way, on purpose)."""


@dataclass(frozen=True)
class Viewer:
    """Who is reading: a user name when the request carried a valid token, else anonymous."""

    name: str | None = None
    is_admin: bool = False


def home(session: Session, hardware: str) -> dict:
    sets = []
    for info in queries.problem_sets(session):
        board = queries.set_leaderboard(session, info.name)
        leader = board.rows[0] if board is not None and board.rows else None
        sets.append(
            views.SetCard(
                name=info.name,
                title=info.title,
                problems=info.problems,
                submissions=info.submissions,
                frozen_at=info.frozen_at,
                leader=leader.user if leader else None,
                leader_score=leader.total if leader else None,
            )
        )
    firsts = [
        views.FirstRow(
            when=f.at,
            user=f.user,
            set=f.set,
            problem=f.problem,
            score=f.score,
            previous_score=f.previous,
            submission_id=f.submission_id,
        )
        for f in queries.recent_firsts(session, limit=10)
    ]
    activity = [
        TrendPoint(hour, count) for hour, count in queries.per_hour(session, hours=ACTIVITY_HOURS, finished=False)
    ]
    state = queries.status(session)
    totals = {
        "submissions": sum(s.submissions for s in sets),
        "users": state.users,
        "last_24h": state.evaluations_last_day,
        "queued": state.queue_depth + state.running + state.env_calls_queued + state.env_calls_running,
    }
    return dict(
        title="Sets",
        nav="home",
        hardware=hardware,
        sets=sets,
        firsts=firsts,
        totals=totals,
        activity_hours=ACTIVITY_HOURS,
        activity_chart=trend_chart(activity, title="Submissions per hour", y_label="submissions"),
    )


def problem_set(session: Session, name: str, page: int, hardware: str, reach_dir: Path | None = None) -> dict:
    info = next((s for s in queries.problem_sets(session) if s.name == name), None)
    board = queries.set_leaderboard(session, name)
    if info is None or board is None:
        raise PageNotFound(f"There is no problem set {name!r}.")
    pager = views.pagination(page, views.DEFAULT_PER_PAGE, len(board.rows))
    rows = [
        views.LeaderRow(
            rank=r.rank,
            user=r.user,
            score=r.total,
            problems_solved=r.problems_scored,
            problems_total=len(board.problems),
        )
        for r in board.rows[pager.offset : pager.offset + pager.per_page]
    ]
    chart = bar_chart(
        [Bar(r.user, r.total, href=f"/users/{r.user}") for r in board.rows[:CHART_ROWS]], title=f"Set scores of {name}"
    )
    problems = [
        views.ProblemLink(
            name=p.name,
            ranked_users=p.ranked_users,
            workloads=p.workloads,
            best_score=p.best_score,
            best_user=p.best_user,
        )
        for p in queries.list_problems(session)
        if p.set == name
    ]
    summary = views.SetCard(
        name=info.name, title=info.title, problems=info.problems, submissions=info.submissions, frozen_at=info.frozen_at
    )
    return dict(
        title=info.title or name,
        nav="home",
        hardware=hardware,
        set=summary,
        description=info.description,
        rows=rows,
        pager=pager,
        problems=problems,
        chart=chart,
        chart_rows=CHART_ROWS,
        reach=reach_section(reach_dir, {p.name for p in problems}),
    )


def problem(
    session: Session, set_name: str, name: str, page: int, hardware: str, reach_dir: Path | None = None
) -> dict:
    version = current_version(session, name)
    board = queries.problem_leaderboard(session, name)
    if version is None or board is None or board.set != set_name:
        raise PageNotFound(f"There is no problem {name!r} in set {set_name!r}.")
    best = _results_of(session, board.entries[:ROOFLINE_POINTS])
    analysis = queries.sol_analysis(session, version.id, hardware)
    costs = analysis.costs if analysis is not None else None
    t_sol = _t_sol_of(analysis, best)
    t_b = _t_b_of(session, name, hardware, best)
    workloads = [
        views.WorkloadRow(
            uuid=w["uuid"],
            axes=w.get("axes", {}),
            t_sol_ms=t_sol.get(w["uuid"]),
            t_baseline_ms=t_b.get(w["uuid"]),
            bound=_bound((costs or {}).get(w["uuid"])),
        )
        for w in version.workloads
    ]
    pager = views.pagination(page, views.DEFAULT_PER_PAGE, len(board.entries))
    ranking = [
        views.RankRow(
            rank=e.rank,
            user=e.user,
            submission_id=e.submission_id,
            score=e.score,
            submitted_at=e.submitted_at,
            harness_version=e.harness_version,
            hardware=e.hardware,
        )
        for e in board.entries[pager.offset : pager.offset + pager.per_page]
    ]
    events = [TimelineEvent(f.at, f.score, f.user, href=f"/submissions/{f.submission_id}") for f in board.firsts]
    roofline = problem_roofline(costs, best, [w["uuid"] for w in version.workloads])
    if roofline is None:
        roofline_svg = empty_chart(f"Roofline on {hardware}", f"no SOL costs stored for this problem on {hardware} yet")
    else:
        roofline_svg = roofline_chart(
            roofline.points,
            memory_bandwidth_bytes_per_s=roofline.bandwidth_bytes_per_s,
            peak_flops_per_s=roofline.peak_flops_per_s,
            hardware=hardware,
        )
    definition = version.definition
    about = dict(
        name=name,
        op_type=definition.get("op_type", ""),
        description=definition.get("description", ""),
        version=version.version_hash[:12],
        reference=definition.get("reference", ""),
        axes={k: _describe_axis(v) for k, v in definition.get("axes", {}).items()},
        inputs={k: _describe_tensor(v) for k, v in definition.get("inputs", {}).items()},
        outputs={k: _describe_tensor(v) for k, v in definition.get("outputs", {}).items()},
    )
    return dict(
        title=name,
        nav="home",
        hardware=hardware,
        set_name=set_name,
        problem=about,
        workloads=workloads,
        ranking=ranking,
        pager=pager,
        timeline_chart=firsts_timeline(events, now=utcnow()),
        roofline_chart=roofline_svg,
        reach=reach_section(reach_dir, {name}),
    )


def submission(session: Session, submission_id: int, viewer: Viewer) -> dict:
    row = queries.live_submission(session, submission_id)
    if row is None:
        raise PageNotFound(f"There is no submission #{submission_id}.")
    owner = row.user.name
    if not queries.is_readable(session, row, viewer.name, viewer.is_admin):
        raise PageNotFound(f"There is no submission #{submission_id}.")
    hacked = hacked_state(session, row)
    problem_row = row.problem_version.problem
    result = row.result
    sources, code_note = None, ""
    code_visible = queries.code_visible(session, row, viewer.name, viewer.is_admin)
    if code_visible:
        sources = [SourceFile(path=s["path"], content=s["content"]) for s in row.solution.get("sources", [])]
    else:
        code_note = (
            f"The code of others' submissions, and what it printed or raised, is shown once set "
            f"{problem_row.set_name} is frozen; until then only its author sees it."
        )
    traces = visible_traces(result.traces or [], code_visible) if result is not None else []
    workloads = workload_rows(result, traces) if result is not None else []
    detail = views.SubmissionDetail(
        id=row.id,
        user=owner,
        set=problem_row.set_name,
        problem=problem_row.name,
        solution=row.solution.get("name", ""),
        mode=row.mode,
        status=row.status,
        verdict=result.verdict
        if result is not None
        else (visible_error(row.error, code_visible) or f"not evaluated yet ({row.status})"),
        score=result.score if result is not None else None,
        submitted_at=row.created_at,
        finished_at=row.finished_at,
        hardware=result.hardware if result is not None else "—",
        harness_version=result.harness_version if result is not None else None,
        workloads=workloads,
        findings=findings_of(traces),
        history=_history(session, row),
        sources=sources,
        code_note=code_note,
        private=row.mode != RANKED_MODE,
        public_score=result.public_score if result is not None else None,
        held_out_score=result.held_out_score if result is not None else None,
        held_out_workloads=len(result.held_out_traces or []) if result is not None else 0,
        hacked=hacked,
    )
    spread = timing_spread_chart(
        [
            TimingSpread(w.uuid, w.min_ms, w.median_ms, w.max_ms, w.t_sol_ms, w.t_baseline_ms)
            for w in workloads
            if w.min_ms is not None and w.median_ms is not None and w.max_ms is not None
        ]
    )
    return dict(title=f"Submission #{row.id}", nav="", s=detail, spread_chart=spread)


def user(session: Session, name: str, page: int, viewer: Viewer) -> dict:
    viewer_row = session.scalar(select(User).where(User.name == viewer.name)) if viewer.name else None
    data = queries.user_page(session, name, viewer=viewer_row)
    if data is None:
        raise PageNotFound(f"There is no user {name!r}.")
    own = viewer_row is not None and (viewer_row.is_admin or viewer_row.name == name)
    _, total = queries.user_submissions(session, name, include_private=own, limit=0)
    pager = views.pagination(page, views.DEFAULT_PER_PAGE, total)
    entries, _ = queries.user_submissions(session, name, include_private=own, offset=pager.offset, limit=pager.per_page)
    sets = queries.sets_of_problems(session)
    rows = [
        views.SubmissionRow(
            id=e.id,
            user=name,
            set=sets.get(e.problem, ""),
            problem=e.problem,
            mode=e.mode,
            status=e.verdict or e.status,
            score=e.score,
            submitted_at=e.submitted_at,
        )
        for e in entries
    ]
    best = sorted(data.best, key=lambda b: -b.score)[:CHART_ROWS]
    bars = [
        Bar(b.problem, b.score, href=f"/sets/{sets.get(b.problem, '')}/problems/{b.problem}", note=f"rank {b.rank}")
        for b in best
    ]
    return dict(
        title=name,
        nav="",
        user={"name": data.name, "joined": data.joined},
        own=own,
        standings=data.sets,
        chart=bar_chart(bars, title=f"Best scores of {name}"),
        submissions=rows,
        pager=pager,
    )


def status(session: Session, hardware: str, viewer: Viewer) -> dict:
    """The queue, workers and hardware for everyone; for admins also the hacked submissions."""
    from solbench.service.web.hardware_rows import hardware_rows

    state = queries.status(session)
    worker_rows = [
        views.WorkerRow(
            name=w.name,
            hardware=w.hardware,
            device=w.device,
            last_seen=w.last_seen,
            state=("busy" if w.running else "idle") if w.alive else "gone",
            current_submission=w.running,
            evaluations=w.evaluations,
            figures=w.figures,
        )
        for w in state.workers
    ]
    per_hour = [TrendPoint(hour, count) for hour, count in queries.per_hour(session, hours=ACTIVITY_HOURS)]
    queue = {
        "queued": state.queue_depth,
        "running": state.running,
        "agent env calls queued": state.env_calls_queued,
        "agent env calls running": state.env_calls_running,
        "evaluations in the last hour": state.evaluations_last_hour,
        "evaluations in the last 24 hours": state.evaluations_last_day,
    }
    return dict(
        title="Status",
        nav="status",
        queue=queue,
        workers=worker_rows,
        hardware_rows=hardware_rows(hardware, worker_rows),
        hours=ACTIVITY_HOURS,
        per_hour_chart=trend_chart(per_hour, title="Evaluations per hour", y_label="evaluations"),
        flagged=flagged_submissions(session, limit=FLAGGED_ROWS) if viewer.is_admin else None,
        flagged_rows=FLAGGED_ROWS,
    )


def _results_of(session: Session, entries: list) -> list[tuple[str, int, Result]]:
    """(user, submission id, result) of ranking entries, in their order."""
    ids = [e.submission_id for e in entries]
    results = {r.submission_id: r for r in session.scalars(select(Result).where(Result.submission_id.in_(ids)))}
    return [(e.user, e.submission_id, results[e.submission_id]) for e in entries if e.submission_id in results]


def _history(session: Session, row: Submission) -> list[views.ScoreHistoryRow]:
    changes = queries.score_changes(session, row.id)
    if not changes or row.result is None:
        return []
    first = changes[0]
    history = [views.ScoreHistoryRow(first.old_harness, first.old_score, row.result.created_at, "first scored")]
    history += [views.ScoreHistoryRow(c.new_harness, c.new_score, c.at, c.reason) for c in changes]
    return history


def _t_sol_of(analysis, best: list) -> dict[str, float]:
    """T_SOL per workload: the stored analysis, else what the best results were scored with."""
    values = dict(analysis.t_sol_ms) if analysis is not None else {}
    for _, _, result in best:
        for uuid, ms in (result.t_sol_ms or {}).items():
            values.setdefault(uuid, ms)
    return values


def _bound(cost: dict | None) -> str | None:
    """Which roof decides T_SOL: the compute units or memory (None without a stored analysis)."""
    if not cost or "compute_ms" not in cost or "memory_ms" not in cost:
        return None
    return "compute" if cost["compute_ms"] >= cost["memory_ms"] else "memory"


def _t_b_of(session: Session, name: str, hardware: str, best: list) -> dict[str, float]:
    from solbench.service.catalog import baselines_for

    values = dict(baselines_for(session, name, hardware))
    for _, _, result in best:
        for uuid, ms in (result.t_b_ms or {}).items():
            if ms is not None:
                values.setdefault(uuid, ms)
    return values


def _describe_axis(axis: dict) -> str:
    kind = axis.get("type", "")
    if kind == "const":
        return f"= {axis.get('value')}"
    if kind == "expr":
        return f"= {axis.get('expression', axis.get('expr', ''))}"
    return "(varies per workload)"


def _describe_tensor(tensor: dict) -> str:
    shape = tensor.get("shape")
    dims = "scalar" if shape is None else "[" + ", ".join(str(d) for d in shape) + "]"
    return f"{tensor.get('dtype', '')} {dims}"
