"""Running a suite's jobs on Celery workers (`solbench worker`) instead of the local pool.

Same contract as `pool.run_jobs`: one JobResult per job, reported as each finishes, traces stored
under the run folder by this process, so a broker run resumes, and summarises, exactly as a local
one. Jobs already finished in the run folder are skipped here, before anything is sent. Each job
goes to the queue of the run's hardware; a worker that dies under a job leaves its message
unacknowledged, and another worker runs it (`celery_app`). If the run is interrupted, the jobs not
yet finished are revoked, so workers do not evaluate what nobody will collect.
"""

from __future__ import annotations

from collections.abc import Callable

from solbench.errors import SolbenchError
from solbench.runner.celery_app import RUN_QUEUE_PREFIX, BrokerSettings, make_celery_app, queue_name
from solbench.runner.errors import BrokerUnreachable
from solbench.runner.jobs import Job
from solbench.runner.remote_jobs import RUN_TASK, RemoteResult, remote_job
from solbench.runner.store import TraceStore
from solbench.runner.worker import JobResult, RunSettings, attach_sol
from solbench.spec.problem import load_problem
from solbench.spec.trace import Trace

POLL_INTERVAL_S = 0.2


def run_queue(hardware: str) -> str:
    return queue_name(RUN_QUEUE_PREFIX, hardware)


def check_reachable(broker: BrokerSettings, timeout_s: float = 5.0) -> None:
    """Raise BrokerUnreachable unless Redis answers at the URL (at once, not after Celery's reconnection attempts)."""
    import redis

    client = redis.Redis.from_url(broker.url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
    try:
        client.ping()
    except (redis.RedisError, OSError) as error:
        raise BrokerUnreachable(broker.url, str(error)) from None
    finally:
        client.close()


def workers_serving(broker: BrokerSettings, hardware: str, timeout_s: float = 2.0) -> list[str]:
    """The names of the live workers that take this hardware's suite-run jobs (asked over the broker)."""
    from kombu.exceptions import OperationalError

    check_reachable(broker)
    app = make_celery_app(broker)
    try:
        replies = app.control.inspect(timeout=timeout_s).active_queues() or {}
    except OperationalError as error:
        raise BrokerUnreachable(broker.url, str(error)) from None
    finally:
        app.close()
    wanted = run_queue(hardware)
    return sorted(node for node, queues in replies.items() if any(q.get("name") == wanted for q in queues))


def run_jobs_on_broker(jobs: list[Job], settings: RunSettings, broker: BrokerSettings, *, hardware: str,
                       on_start: Callable[[Job], None] | None = None,
                       on_done: Callable[[JobResult], None] | None = None) -> list[JobResult]:
    """Results in completion order, one per job; the jobs run on the workers of `hardware`."""
    app = make_celery_app(broker)
    store = TraceStore(settings.out)
    results: list[JobResult] = []
    sent: dict[str, Job] = {}

    def finish(result: JobResult) -> None:
        results.append(result)
        if on_done:
            on_done(result)

    try:
        for job in jobs:
            if on_start:
                on_start(job)
            early = _skipped_or_unreadable(job, settings, store)
            if early is not None:
                finish(early)
                continue
            message = remote_job(job, settings.config).model_dump(mode="json")
            sent[app.send_task(RUN_TASK, args=[message], queue=run_queue(hardware)).id] = job
        if sent:
            for task_id, meta in app.backend.get_many(set(sent), interval=POLL_INTERVAL_S, timeout=None):
                finish(_collect(sent.pop(task_id), meta, settings, store))
                app.backend.forget(task_id)
    except BaseException:
        if sent:  # interrupted: nobody will collect these
            app.control.revoke(list(sent))
        raise
    finally:
        app.close()
    return results


def _skipped_or_unreadable(job: Job, settings: RunSettings, store: TraceStore) -> JobResult | None:
    """A result without sending the job: finished by an earlier run, or its problem cannot be read."""
    try:
        problem = load_problem(job.problem_dir)
    except SolbenchError as error:
        return JobResult(job, error=str(error))
    if not settings.rerun and store.finished(job, [w.uuid for w in problem.workloads]):
        return JobResult(job, skipped=True)
    return None


def _collect(job: Job, meta: dict, settings: RunSettings, store: TraceStore) -> JobResult:
    """Store a worker's traces (T_SOL attached here, as a local run does) and count their statuses."""
    if meta.get("status") != "SUCCESS":
        return JobResult(job, error=f"worker failed: {meta.get('result')!r}")
    remote = RemoteResult.model_validate(meta["result"])
    if remote.error:
        return JobResult(job, error=remote.error, worker_died=remote.worker_died, seconds=remote.seconds)
    result = JobResult(job, seconds=remote.seconds)
    try:
        traces = [Trace.model_validate_json(line) for line in remote.traces_jsonl.splitlines() if line]
        if settings.hardware:
            traces = attach_sol(traces, load_problem(job.problem_dir), settings)
        result.trace_path = str(store.write(job, traces))
    except SolbenchError as error:
        result.error = str(error)
        return result
    for trace in traces:
        status = trace.evaluation.status.value
        result.statuses[status] = result.statuses.get(status, 0) + 1
    return result
