"""One pool worker: a spawned process that runs the jobs sent down its pipe, and the parent's handle on it.

The parent waits on the pipe and the process sentinel together, so it tells a result from a death
(the OOM killer, a kill -9) and knows which job the dead worker held and how its process ended.
"""

from __future__ import annotations

import signal
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnContext

from solbench.runner.errors import RunError
from solbench.runner.jobs import Job
from solbench.runner.worker import JobResult, RunSettings, run_job, sandbox_pool

STOP_GRACE_S = 10.0
"""How long a stopped worker may take to close its sandboxes (a sandbox gets 5 s to exit) before SIGKILL."""


class WorkerDied(RunError):
    """The worker's process ended while it held a job; `how` says how it ended (see `describe_exit`)."""

    def __init__(self, job: Job, how: str):
        self.job, self.how = job, how
        super().__init__(f"{job.key}: the worker process running it {how}")


class WorkerProcess:
    def __init__(self, context: SpawnContext):
        self._connection, child_end = context.Pipe()
        self.process = context.Process(target=serve, args=(child_end,), name="solbench-worker")
        self.process.start()
        child_end.close()
        self.job: Job | None = None
        """The job it is running now; None while idle."""

    @property
    def waitables(self) -> list:
        """What `multiprocessing.connection.wait` watches: a result arriving, or the process ending."""
        return [self._connection, self.process.sentinel]

    def start(self, job: Job, settings: RunSettings) -> None:
        """Hand it a job; raises WorkerDied when the process is already gone."""
        self.job = job
        try:
            self._connection.send((job, settings))
        except OSError:
            raise WorkerDied(job, self._how_it_ended()) from None

    def collect(self) -> JobResult:
        """The running job's result (call once `waitables` is ready); raises WorkerDied when it died instead."""
        job = self.job
        assert job is not None, "collect follows start"
        try:
            result = self._connection.recv()
        except (EOFError, OSError):  # the pipe closed, or closed halfway through a message: the process is gone
            raise WorkerDied(job, self._how_it_ended()) from None
        self.job = None
        return result

    def ask_to_stop(self) -> None:
        """Idle: tell it to exit. Busy: SIGTERM, which it turns into KeyboardInterrupt to close its sandboxes."""
        if not self.process.is_alive():
            return
        if self.job is None:
            try:
                self._connection.send(None)
                return
            except OSError:
                pass
        self.process.terminate()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self._connection.close()

    def _how_it_ended(self) -> str:
        self.process.join(STOP_GRACE_S)
        if self.process.is_alive():  # closed its pipe but lingers: nothing more will come from it
            self.process.kill()
            self.process.join()
            return "closed its pipe to the runner and was killed"
        return describe_exit(self.process.exitcode)


def describe_exit(exitcode: int | None) -> str:
    """`multiprocessing` exit codes in words: a negative one is the signal that ended the process."""
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name if -exitcode in signal.valid_signals() else f"signal {-exitcode}"
        hint = " (the OOM killer sends this when memory runs out)" if -exitcode == signal.SIGKILL else ""
        return f"was killed by {name}{hint}"
    return f"exited with status {exitcode}"


def serve(connection: Connection) -> None:
    """The worker's loop: run each job it is sent and send back its result, until None, EOF or SIGTERM.

    Ctrl-C is left to the runner, which stops every worker the same way whether the terminal's
    SIGINT reached the workers or only the runner.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _interrupt_once)
    sandboxes = None
    try:
        while (message := connection.recv()) is not None:
            job, settings = message
            try:
                if sandboxes is None:  # one run's settings: a job another pool would not suit gets a fresh sandbox
                    sandboxes = sandbox_pool(settings)
                result = run_job(job, settings, sandboxes)
            except Exception as error:  # a harness bug met on one problem: record it, keep the worker going
                result = JobResult(job, error=f"worker failed: {type(error).__name__}: {error}")
            connection.send(result)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):  # the runner went away, or stopped us
        pass
    finally:
        if sandboxes is not None:
            sandboxes.close()


def _interrupt_once(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut short the sandbox cleanup
    raise KeyboardInterrupt
