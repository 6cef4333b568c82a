"""A suite-run job as a broker message, and what a worker machine does with it.

The message carries what the evaluation needs as text (the problem's definition and workloads, the
solution file, the evaluation settings), so a worker needs no shared filesystem for ordinary
problems. Where the worker has the problem folder at the same path with the same files (the same
checkout, a shared disk), it evaluates it there, so workloads that read tensors from files find them.

The worker evaluates and sends the traces back; the runner attaches T_SOL, stores and summarises
them exactly as a local run does (`runner.worker.run_job`), so both give the same summary.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, TypeAdapter

from solbench.errors import SolbenchError
from solbench.evaluation import EvaluationConfig
from solbench.runner.celery_app import MAX_DELIVERIES, count_delivery
from solbench.runner.jobs import Job
from solbench.spec.problem import DEFINITION_FILE, WORKLOAD_FILE

RUN_TASK = "solbench.runner.evaluate_job"
_CONFIG = TypeAdapter(EvaluationConfig)


class RemoteJob(BaseModel):
    """One problem × solution of a suite run, sent to a worker of the run's hardware."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    """``set/problem/solution``, as `Job.key`."""
    problem_dir: str
    """Where the problem lives on the runner's machine; used by a worker that has the same files there."""
    definition_json: str
    workload_jsonl: str
    solution: str
    """``reference``, ``reference-compiled``, or the name of a shipped solution file (its text in `solution_json`)."""
    solution_json: str | None = None
    config: dict
    """The run's EvaluationConfig (pydantic's dump of the dataclass); the worker's own device replaces its device."""


class RemoteResult(BaseModel):
    """What a worker sends back: the traces as JSON lines, or why there are none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    traces_jsonl: str = ""
    error: str | None = None
    worker_died: str | None = None
    """Set when the job's workers died on each of `MAX_DELIVERIES` deliveries; it was not run again."""
    seconds: float = 0.0
    worker: str = ""
    """The Celery node name of the worker that ran it."""


def remote_job(job: Job, config: EvaluationConfig) -> RemoteJob:
    folder = Path(job.problem_dir).resolve()
    return RemoteJob(
        key=job.key,
        problem_dir=str(folder),
        definition_json=(folder / DEFINITION_FILE).read_text(),
        workload_jsonl=(folder / WORKLOAD_FILE).read_text(),
        solution=job.solution,
        solution_json=job.solution_path.read_text() if job.solution_path else None,
        config=_CONFIG.dump_python(config, mode="json"),
    )


def evaluate_remote(message: RemoteJob, device: str | None, worker: str = "") -> RemoteResult:
    """Evaluate the job here (on `device` when the worker names one); a bad problem or solution is an error result."""
    from dataclasses import replace

    from solbench.evaluation import evaluate
    from solbench.runner.worker import solution_for
    from solbench.spec.problem import load_problem

    started = time.perf_counter()
    config = _CONFIG.validate_python(message.config)
    if device:
        config = replace(config, device=device)
    with tempfile.TemporaryDirectory(prefix="solbench-job-") as scratch:
        try:
            problem = load_problem(_problem_folder(message, Path(scratch)), "gpu")  # only workload.jsonl travels
            solution_path = None
            if message.solution_json is not None:
                solution_path = Path(scratch) / "solution.json"
                solution_path.write_text(message.solution_json)
            set_name, name, solution_name = message.key.split("/", 2)
            job = Job(problem.root, name, set_name, solution_name, solution_path)
            resolved = config.resolved()
            traces = evaluate(problem, solution_for(job, problem, resolved.device), resolved)
        except SolbenchError as error:
            return RemoteResult(key=message.key, error=str(error), seconds=time.perf_counter() - started, worker=worker)
    return RemoteResult(
        key=message.key,
        traces_jsonl="".join(t.model_dump_json() + "\n" for t in traces),
        seconds=time.perf_counter() - started,
        worker=worker,
    )


def _problem_folder(message: RemoteJob, scratch: Path) -> Path:
    """The runner's folder when this machine has it with the same files; else a copy written from the message."""
    shared = Path(message.problem_dir)
    try:
        if (shared / DEFINITION_FILE).read_text() == message.definition_json and (
            shared / WORKLOAD_FILE
        ).read_text() == message.workload_jsonl:
            return shared
    except OSError:
        pass
    copy = scratch / shared.name
    copy.mkdir()
    (copy / DEFINITION_FILE).write_text(message.definition_json)
    (copy / WORKLOAD_FILE).write_text(message.workload_jsonl)
    return copy


def register_run_task(app, *, broker_url: str, device: str | None) -> None:
    """Add the suite-run task to `app`: evaluate a `RemoteJob`, return a `RemoteResult` as JSON."""

    @app.task(name=RUN_TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
    def evaluate_job(task, message: dict) -> dict:
        job = RemoteJob.model_validate(message)
        worker = task.request.hostname or ""
        deliveries = count_delivery(broker_url, task.request.id)
        if deliveries > MAX_DELIVERIES:
            return RemoteResult(
                key=job.key,
                worker=worker,
                worker_died=(f"died on each of {MAX_DELIVERIES} workers it was delivered to"),
                error=f"the workers running it died on each of {MAX_DELIVERIES} attempts; no traces written, "
                f"so running the same command again retries it",
            ).model_dump(mode="json")
        return evaluate_remote(job, device, worker).model_dump(mode="json")
