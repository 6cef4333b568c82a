"""Running jobs on a local pool of worker processes, reporting each as it finishes.

Each worker evaluates one problem at a time (its solution runs in a sandbox process of its own);
workers are spawned, not forked, so no state leaks from the parent into them.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import replace

from solbench.runner.jobs import Job
from solbench.runner.worker import JobResult, RunSettings, run_job


def run_jobs(jobs: list[Job], settings: RunSettings, *, workers: int = 1,
             on_start: Callable[[Job], None] | None = None,
             on_done: Callable[[JobResult], None] | None = None) -> list[JobResult]:
    """Results in completion order. With one worker everything runs in this process."""
    if settings.threads_per_worker is None:
        settings = replace(settings, threads_per_worker=max(1, (os.cpu_count() or 1) // max(workers, 1)))
    results: list[JobResult] = []
    if workers <= 1:
        for job in jobs:
            if on_start:
                on_start(job)
            results.append(run_job(job, settings))
            if on_done:
                on_done(results[-1])
        return results
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        pending: dict[Future, Job] = {}
        queue = list(jobs)
        while queue or pending:
            while queue and len(pending) < workers:
                job = queue.pop(0)
                if on_start:
                    on_start(job)
                pending[pool.submit(run_job, job, settings)] = job
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                try:
                    result = future.result()
                except Exception as error:  # a worker died (killed, out of memory): record it, go on
                    result = JobResult(job, error=f"worker failed: {type(error).__name__}: {error}")
                results.append(result)
                if on_done:
                    on_done(result)
    return results
