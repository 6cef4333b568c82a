"""Running jobs on a local pool of worker processes, reporting each as it finishes.

Each worker evaluates one problem at a time (its solution runs in a sandbox process of its own);
workers are spawned, not forked, so no state leaks from the parent into them.

A worker process that dies (the OOM killer, a kill -9) costs only the job it was running: the
other workers carry on, a fresh process takes its place, and the job goes to the back of the queue
for one more try. Most such deaths are transient — memory pressure from jobs that ran side by side,
a process killed by hand — and a retry after the rest of the queue, with less running beside it,
usually succeeds, so the run loses nothing. A job whose worker dies on the retry too is recorded
as failed, with no trace file, so running the same command again retries it; one retry bounds the
time a job that always exhausts memory can cost.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import wait

from solbench.runner.jobs import Job
from solbench.runner.worker import JobResult, RunSettings, run_job, sandbox_pool
from solbench.runner.worker_process import STOP_GRACE_S, WorkerDied, WorkerProcess

RETRIES_AFTER_WORKER_DEATH = 1
DEFAULT_WORKERS = 1
"""Worker processes of a run that names none: everything runs in this process."""


def run_jobs(
    jobs: list[Job],
    settings: RunSettings,
    *,
    workers: int = DEFAULT_WORKERS,
    on_start: Callable[[Job], None] | None = None,
    on_done: Callable[[JobResult], None] | None = None,
    on_retry: Callable[[WorkerDied], None] | None = None,
    retries: int = RETRIES_AFTER_WORKER_DEATH,
) -> list[JobResult]:
    """Results in completion order, one per job. With one worker everything runs in this process.

    ``on_retry`` hears of each worker death that sends its job back to the queue; a job whose
    worker died ``retries + 1`` times ends as a result with ``worker_died`` set.
    """
    if settings.threads_per_worker is None:
        settings = replace(settings, threads_per_worker=max(1, (os.cpu_count() or 1) // max(workers, 1)))
    if workers <= 1:
        results: list[JobResult] = []
        sandboxes = sandbox_pool(settings)
        try:
            for job in jobs:
                if on_start:
                    on_start(job)
                results.append(run_job(job, settings, sandboxes))
                if on_done:
                    on_done(results[-1])
        finally:
            if sandboxes is not None:
                sandboxes.close()
        return results
    return _Pool(settings, workers, on_start, on_done, on_retry, retries).run(jobs)


class _Pool:
    def __init__(self, settings: RunSettings, size: int, on_start, on_done, on_retry, retries: int):
        self.settings, self.size, self.retries = settings, size, retries
        self.on_start, self.on_done, self.on_retry = on_start, on_done, on_retry
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[WorkerProcess] = []
        self.results: list[JobResult] = []
        self.deaths: dict[Job, int] = {}

    def run(self, jobs: list[Job]) -> list[JobResult]:
        queue = deque(jobs)
        try:
            while queue or self._busy():
                while queue and len(self._busy()) < self.size:
                    self._start(queue.popleft(), queue)
                ready = set(wait([w for worker in self._busy() for w in worker.waitables]))
                for worker in [w for w in self._busy() if ready.intersection(w.waitables)]:
                    try:
                        self._finish(worker.collect())
                    except WorkerDied as death:
                        self._bury(worker, death, queue)
        finally:
            self._stop_all()
        return self.results

    def _busy(self) -> list[WorkerProcess]:
        return [w for w in self.workers if w.job is not None]

    def _start(self, job: Job, queue: deque[Job]) -> None:
        for dead in [w for w in self.workers if w.job is None and not w.process.is_alive()]:  # died while idle
            self.workers.remove(dead)
            dead.kill()
        worker = next((w for w in self.workers if w.job is None), None)
        if worker is None:
            worker = WorkerProcess(self.context)
            self.workers.append(worker)
        if self.on_start:
            self.on_start(job)
        try:
            worker.start(job, self.settings)
        except WorkerDied as death:
            self._bury(worker, death, queue)

    def _bury(self, worker: WorkerProcess, death: WorkerDied, queue: deque[Job]) -> None:
        """Forget the dead worker; requeue its job at the back, or record it once its retries are spent."""
        self.workers.remove(worker)
        worker.kill()
        self.deaths[death.job] = self.deaths.get(death.job, 0) + 1
        if self.deaths[death.job] <= self.retries:
            queue.append(death.job)
            if self.on_retry:
                self.on_retry(death)
            return
        attempts = self.deaths[death.job]
        self._finish(
            JobResult(
                death.job,
                worker_died=death.how,
                error=(
                    f"the worker process running it {death.how}"
                    + (f", on each of {attempts} attempts" if attempts > 1 else "")
                    + "; no traces written, so running the same command again retries it"
                ),
            )
        )

    def _finish(self, result: JobResult) -> None:
        self.results.append(result)
        if self.on_done:
            self.on_done(result)

    def _stop_all(self) -> None:
        """Idle workers exit; busy ones (Ctrl-C, an error here) close their sandboxes first, or are killed."""
        for worker in self.workers:
            worker.ask_to_stop()
        deadline = time.monotonic() + STOP_GRACE_S
        try:
            for worker in self.workers:
                worker.process.join(max(0.0, deadline - time.monotonic()))
        finally:  # a second Ctrl-C while waiting still leaves no process behind
            for worker in self.workers:
                worker.kill()
