"""A suite run's and a baseline measurement's progress events (runner.progress) as lines on stderr, and a bar."""

from __future__ import annotations

from collections.abc import Callable

from solbench.cli.render import worker_retry_line
from solbench.runner.progress import (
    BrokerWorkers,
    JobDone,
    JobRetried,
    Notice,
    RunEvent,
    SearchDone,
    SearchRound,
    SearchStarted,
    Skipped,
    Started,
)


class ProgressLines:
    """A workflow's `progress`: one line per event on `console`; with `bar`, a bar under the lines on a terminal.

    `started` and `job_line` word the command's own lines; call `close` once the workflow returns or fails.
    """

    def __init__(
        self, console, *, started: Callable[[Started], str], job_line: Callable[[JobDone], str], bar: bool = False
    ):
        self.console, self.started, self.job_line = console, started, job_line
        self.want_bar, self.bar, self.task = bar and console.is_terminal, None, None

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, Started):
            self.console.print(self.started(event))
            self._start_bar(len(event.jobs))
        elif isinstance(event, JobDone):
            self.console.print(self.job_line(event))
            if self.bar is not None and self.task is not None:
                self.bar.update(self.task, advance=1)
        else:
            self.console.print(_line(event))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def _start_bar(self, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        if not self.want_bar:
            return
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
        )
        self.bar.start()
        self.task = self.bar.add_task("running", total=total)


def _line(event: RunEvent) -> str:
    from solbench.cli.optimize_command import round_line

    if isinstance(event, Notice):
        return event.text
    if isinstance(event, Skipped):
        return f"[yellow]skipped:[/] {event.reason}"
    if isinstance(event, BrokerWorkers):
        if event.workers:
            return f"{len(event.workers)} worker(s) of {event.hardware}: {', '.join(event.workers)}"
        return (
            f"[yellow]no worker of {event.hardware} answers yet[/]: the jobs wait in the queue for one "
            f"(`solbench worker --broker {event.broker} --hardware {event.hardware}`)"
        )
    if isinstance(event, JobRetried):
        return worker_retry_line(event)
    if isinstance(event, SearchStarted):
        return f"searching with {event.searcher}: {event.rounds} round(s) per problem on {event.problems} problem(s)"
    if isinstance(event, SearchRound):
        return round_line(event.report, event.rounds)
    if isinstance(event, SearchDone):
        return f"{event.problem} · {event.outcome}"
    raise TypeError(f"not a progress event: {event!r}")
