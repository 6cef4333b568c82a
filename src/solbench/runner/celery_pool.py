"""Running a suite's jobs on Celery workers (`solbench worker`) instead of the local pool.

Same contract as `pool.run_jobs`: one JobResult per job, reported as each finishes, traces stored
under the run folder by this process, so a broker run resumes, and summarises, exactly as a local
one. Jobs already finished in the run folder are skipped here, before anything is sent. Each job
goes to the queue of the run's hardware. Workers record which jobs they hold and refresh an alive
key in Redis (`celery_app.WorkerLiveness`); a job whose worker's key expired without a result lost
its worker (a killed process, a machine gone), and is sent again at once, as the local pool
retries a job whose worker process died: once, then it is reported lost. (The broker would also
redeliver its unacknowledged message, but only after the visibility timeout; that copy is revoked.)
If the run is interrupted, the jobs not yet finished are revoked, so workers do not evaluate what
nobody will collect.
"""

from __future__ import annotations

from collections.abc import Callable

from celery.states import READY_STATES

from solbench.errors import SolbenchError
from solbench.runner.celery_app import RUN_QUEUE_PREFIX, BrokerSettings, lost_jobs, make_celery_app, queue_name
from solbench.runner.errors import BrokerUnreachable
from solbench.runner.jobs import Job
from solbench.runner.pool import RETRIES_AFTER_WORKER_DEATH
from solbench.runner.remote_jobs import RUN_TASK, RemoteResult, remote_job
from solbench.runner.store import TraceStore
from solbench.runner.worker import JobResult, RunSettings, attach_sol
from solbench.runner.worker_process import WorkerDied
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


def run_jobs_on_broker(
    jobs: list[Job],
    settings: RunSettings,
    broker: BrokerSettings,
    *,
    hardware: str,
    on_start: Callable[[Job], None] | None = None,
    on_done: Callable[[JobResult], None] | None = None,
    on_retry: Callable[[WorkerDied], None] | None = None,
    retries: int = RETRIES_AFTER_WORKER_DEATH,
) -> list[JobResult]:
    """Results in completion order, one per job; the jobs run on the workers of `hardware`.

    As with the local pool, a job whose worker died (its heartbeat stopped) is sent again, `retries`
    times; then it ends as a result with `worker_died` set.
    """
    dispatch = _Dispatch(make_celery_app(broker), broker, settings, run_queue(hardware), on_done, on_retry, retries)
    try:
        for job in jobs:
            if on_start:
                on_start(job)
            early = _skipped_or_unreadable(job, settings, dispatch.store)
            if early is not None:
                dispatch.finish(early)
            else:
                dispatch.send(job)
        dispatch.wait()
    except BaseException:
        if dispatch.sent:  # interrupted: nobody will collect these
            dispatch.app.control.revoke(list(dispatch.sent))
        raise
    finally:
        dispatch.app.close()
    return dispatch.results


class _Dispatch:
    """The jobs in flight on the broker: sending, collecting, and sending again those whose worker died."""

    def __init__(self, app, broker: BrokerSettings, settings: RunSettings, queue: str, on_done, on_retry, retries: int):
        self.app, self.broker, self.settings, self.queue = app, broker, settings, queue
        self.on_done, self.on_retry, self.retries = on_done, on_retry, retries
        self.store = TraceStore(settings.out)
        self.results: list[JobResult] = []
        self.sent: dict[str, Job] = {}
        """Task id -> job, for the jobs not finished yet."""
        self.deaths: dict[Job, int] = {}

    def send(self, job: Job) -> None:
        message = remote_job(job, self.settings.config).model_dump(mode="json")
        self.sent[self.app.send_task(RUN_TASK, args=[message], queue=self.queue).id] = job

    def finish(self, result: JobResult) -> None:
        self.results.append(result)
        if self.on_done:
            self.on_done(result)

    def wait(self) -> None:
        while self.sent:
            for task_id, meta in self.app.backend.get_many(set(self.sent), interval=POLL_INTERVAL_S, max_iterations=1):
                job = self.sent.pop(task_id, None)
                if job is not None:
                    self.finish(_collect(job, meta, self.settings, self.store))
                self.app.backend.forget(task_id)
            self._send_again_what_lost_its_worker()

    def _send_again_what_lost_its_worker(self) -> None:
        for task_id, worker in lost_jobs(self.broker.url, list(self.sent)).items():
            if self.app.AsyncResult(task_id).state in READY_STATES:
                continue  # finished just before its worker went: collected on the next round
            job = self.sent.pop(task_id)
            self.app.control.revoke(task_id)  # should its message come back after the visibility timeout
            self.deaths[job] = self.deaths.get(job, 0) + 1
            death = WorkerDied(job, f"on {worker} stopped sending heartbeats")
            if self.deaths[job] <= self.retries:
                if self.on_retry:
                    self.on_retry(death)
                self.send(job)
            else:
                self.finish(
                    JobResult(
                        job,
                        worker_died=death.how,
                        error=(
                            f"the worker running it {death.how}, on each of {self.deaths[job]} attempts; no "
                            f"traces written, "
                            f"so running the same command again retries it"
                        ),
                    )
                )


def _skipped_or_unreadable(job: Job, settings: RunSettings, store: TraceStore) -> JobResult | None:
    """A result without sending the job: finished by an earlier run, or its problem cannot be read."""
    try:
        problem = load_problem(job.problem_dir, "gpu")  # remote workers receive workload.jsonl (the GPU tier)
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
            traces = attach_sol(traces, load_problem(job.problem_dir, "gpu"), settings)
        result.trace_path = str(store.write(job, traces))
    except SolbenchError as error:
        result.error = str(error)
        return result
    for trace in traces:
        assert trace.evaluation is not None, "a worker returns evaluated traces"
        status = trace.evaluation.status.value
        result.statuses[status] = result.statuses.get(status, 0) + 1
    return result
