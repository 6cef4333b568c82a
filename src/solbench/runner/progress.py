"""What a suite run or a baseline measurement reports as it goes: one typed event per call of its `progress`.

The workflows (`run_suite`, `measure_baselines`) never print; a front end renders these events (the CLI's
lines and bar), a script may log them or ignore them. In order: `Notice`s and `Skipped` problems while the
run is prepared, `BrokerWorkers` for a run on a broker, `Started` once the jobs are planned, then a
`JobDone` per job (and a `JobRetried` for each worker that died holding one); a baseline measurement with
a search then reports `SearchStarted`, `SearchRound`s and a `SearchDone` per problem.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solbench.runner.jobs import Job
from solbench.runner.worker import JobResult
from solbench.runner.worker_process import WorkerDied


@dataclass(frozen=True)
class Notice:
    """A line of news before the jobs start: probing this CPU (the first time on a machine), each step of it."""

    text: str


@dataclass(frozen=True)
class Skipped:
    """A problem left out: it ships no solution of the name asked for."""

    reason: str


@dataclass(frozen=True)
class BrokerWorkers:
    """The `solbench worker`s that take the hardware's jobs on the broker; none yet: the jobs wait in its queue."""

    broker: str
    hardware: str
    workers: tuple[str, ...]


@dataclass(frozen=True)
class Started:
    """The jobs are planned (one per problem and solution) and start now."""

    jobs: tuple[Job, ...]
    solutions: tuple[str, ...]
    """The solution names each problem is evaluated with (a baseline measurement's candidates)."""
    out: Path
    """The folder the traces go to."""
    hardware: str | None
    """The hardware id T_SOL (a run) or T_b (a baseline measurement) is for; None: a run without SOL scores."""


@dataclass(frozen=True)
class JobDone:
    result: JobResult
    done: int
    """Jobs finished so far, this one included."""
    total: int


@dataclass(frozen=True)
class JobRetried:
    """The worker process holding `job` died (`how`: ``was killed by SIGKILL`` …); the job is queued once more."""

    job: Job
    how: str


@dataclass(frozen=True)
class SearchStarted:
    """A baseline search (`measure_baselines(search=...)`) begins, once the candidates are timed."""

    searcher: str
    """What searches: the agent's command."""
    rounds: int
    problems: int


@dataclass(frozen=True)
class SearchRound:
    """A round of one problem's search ended."""

    report: Any
    """The searcher's own record of the round (for an agent's loop, `solbench.optimize.loop.RoundReport`)."""
    rounds: int
    """Rounds per problem."""


@dataclass(frozen=True)
class SearchDone:
    """One problem's search ended with a correct candidate; `outcome` names the best and its reward."""

    problem: str
    """``set/name``."""
    outcome: str


RunEvent = Notice | Skipped | BrokerWorkers | Started | JobDone | JobRetried | SearchStarted | SearchRound | SearchDone
Progress = Callable[[RunEvent], None]


def ignore(event: RunEvent) -> None:
    """The progress of a caller that asks for none."""


def job_reports(progress: Progress, total: int) -> tuple[Callable[[JobResult], None], Callable[[WorkerDied], None]]:
    """The `on_done` and `on_retry` of `run_jobs` for `total` jobs, told to `progress` as JobDone and JobRetried."""
    finished = [0]

    def done(result: JobResult) -> None:
        finished[0] += 1
        progress(JobDone(result, finished[0], total))

    def retried(death: WorkerDied) -> None:
        progress(JobRetried(death.job, death.how))

    return done, retried
