"""The status page's facts: which workers are alive, what hardware they evaluate on, how many evaluations ran."""

from __future__ import annotations

from datetime import timedelta

from solbench.service import queries
from solbench.service.jobs import WorkerInfo, record_worker, record_worker_stopped
from solbench.service.models import Worker, utcnow
from solbench.service.web import views
from solbench.service.web.hardware_rows import hardware_rows
from solbench.service.worker_hardware import HardwareFigures, hardware_figures

TWO_CORE_VM = HardwareFigures(
    name="local CPU: a 2-core VM (2 cores)",
    memory_bandwidth_bytes_per_s=22e9,
    bfloat16_flops_per_s=2e11,
    float32_flops_per_s=1e11,
)


def _seen(factory, name: str, seconds_ago: float) -> None:
    with factory.begin() as session:
        session.get(Worker, name).last_seen = utcnow() - timedelta(seconds=seconds_ago)


def _alive(factory) -> dict[str, bool]:
    with factory() as session:
        return {w.name: w.alive for w in queries.status(session).workers}


def test_a_worker_is_gone_once_one_heartbeat_is_overdue_and_at_once_when_seen_to_stop(database):
    embedded = WorkerInfo(name="embedded", hardware="H100_SXM", device="cpu", heartbeat_s=5.0, beats_when_idle=True)
    celery = WorkerInfo(name="celery", hardware="H100_SXM", device="cpu", heartbeat_s=5.0)
    stopped = WorkerInfo(name="stopped", hardware="H100_SXM", device="cpu", heartbeat_s=5.0, beats_when_idle=True)
    for worker in (embedded, celery, stopped):
        record_worker(database, worker)
    record_worker_stopped(database, "stopped")
    assert _alive(database) == {"embedded": True, "celery": True, "stopped": False}

    _seen(database, "embedded", 9)  # one beat late: still within the grace
    _seen(database, "celery", 60)  # waits on its broker between jobs: promises no beat while idle
    assert _alive(database) == {"embedded": True, "celery": True, "stopped": False}
    _seen(database, "embedded", 12)  # two beats missed: dead, not shown alive for minutes
    assert _alive(database)["embedded"] is False

    record_worker(database, celery, current=7)  # running a job, it beats like any other
    _seen(database, "celery", 12)
    with database() as session:
        gone = next(w for w in queries.status(session).workers if w.name == "celery")
    assert not gone.alive and gone.running is None  # a dead worker runs nothing

    record_worker(database, stopped)  # a restarted worker of the same name is back
    assert _alive(database)["stopped"] is True


def test_evaluations_are_counted_over_the_last_hour_and_day_not_averaged_to_zero(in_process_service):
    with in_process_service.service.session_factory() as session:
        state = queries.status(session)
    page = in_process_service.get("/status").text
    assert state.evaluations_last_day >= 1  # the sample finished a few today (a 24 h mean once showed 0.0)
    assert (
        f'<div class="big">{state.evaluations_last_hour}</div><div class="label">evaluations in the last hour' in page
    )
    assert (
        f'<div class="big">{state.evaluations_last_day}</div><div class="label">evaluations in the last 24 hours'
        in page
    )
    assert "mean" not in page


def test_the_hardware_table_shows_what_the_workers_report_not_the_servers_own_cpu():
    def row(name, hardware, state="idle", figures=None):
        return views.WorkerRow(
            name=name, hardware=hardware, device="cpu", last_seen=utcnow(), state=state, figures=figures
        )

    rows = hardware_rows("local", [row("w1", "local", figures=TWO_CORE_VM), row("w2", "local", state="gone")])
    assert [(r.id, r.name, r.workers, r.bfloat16_flops_per_s, r.source) for r in rows] == [
        ("local", TWO_CORE_VM.name, 1, 2e11, "reported by its workers")
    ]

    unreported = hardware_rows("local", [])
    assert unreported[0].bfloat16_flops_per_s is None and "each worker's own CPU" in unreported[0].name

    h100 = hardware_figures("H100_SXM")
    scored = hardware_rows("H100_SXM", [row("w1", "local", figures=TWO_CORE_VM)])
    assert [(r.id, r.bfloat16_flops_per_s, r.source) for r in scored] == [
        ("H100_SXM", h100.bfloat16_flops_per_s, "the hardware database"),
        ("local", 2e11, "reported by its workers"),
    ]
    assert h100.bfloat16_flops_per_s == 989.4e12  # the bf16 rate, not the fp8 or int8 one (1979 T)


def test_a_worker_reports_the_figures_it_resolves_itself(database):
    record_worker(database, WorkerInfo(name="w", hardware="local", device="cpu", figures=TWO_CORE_VM))
    with database() as session:
        (worker,) = queries.status(session).workers
    assert worker.figures == TWO_CORE_VM
