"""One job, start to finish, in a worker process: evaluate, attach T_SOL and scores, store the traces."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from solbench.errors import SolbenchError
from solbench.evaluation import EvaluationConfig, SandboxPool, evaluate
from solbench.runner.errors import RunError
from solbench.runner.jobs import COMPILED_REFERENCE, REFERENCE, Job
from solbench.runner.store import TraceStore
from solbench.spec.packaging import compiled_reference_solution, reference_solution
from solbench.spec.problem import load_problem, load_solution

if TYPE_CHECKING:
    from solbench.scoring import Baselines


@dataclass(frozen=True)
class RunSettings:
    config: EvaluationConfig
    out: Path
    hardware: str | None = None
    """Hardware id whose T_SOL is attached to every trace (None: no SOL)."""
    baselines: Baselines | None = None
    """T_b for the SOL scores, loaded once by the run; None: the reference timed in the same evaluation."""
    rerun: bool = False
    threads_per_worker: int | None = None
    """torch threads each worker, and so each solution's sandbox, runs at (run_jobs gives each its share of the
    CPUs); a config that names its own `threads` wins."""
    warm_sandboxes: bool = False
    """Keep a spare sandbox started in each worker (evaluation/pool.py), so a job skips the sandbox's start-up."""
    tier: str | None = None
    """Workload tier to evaluate (``gpu``, ``cpu``, ``all``); None: by device (spec.tiers.default_tier)."""

    @property
    def evaluation_config(self) -> EvaluationConfig:
        """The config each job is evaluated under: the reference and the solution at the worker's thread count."""
        if self.config.threads is not None or not self.threads_per_worker:
            return self.config
        return replace(self.config, threads=self.threads_per_worker)


@dataclass
class JobResult:
    job: Job
    statuses: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    skipped: bool = False
    """Already finished in an earlier run (and --rerun not given)."""
    error: str | None = None
    """Why the job could not run at all (bad problem or solution file, its worker died); no traces then."""
    worker_died: str | None = None
    """How the worker process running it ended (``was killed by SIGKILL …``) when it died on every attempt."""
    trace_path: str | None = None
    tier_note: str = ""
    """Where the CPU tier asked for is the problem's published workloads (it needs none): why (Problem.tier_note)."""


def run_job(job: Job, settings: RunSettings, sandboxes: SandboxPool | None = None) -> JobResult:
    started = time.perf_counter()
    if settings.threads_per_worker:
        import torch

        torch.set_num_threads(settings.threads_per_worker)
    result = JobResult(job)
    store = TraceStore(settings.out)
    try:
        problem = load_run_problem(job, settings)
        result.tier_note = problem.tier_note
        if not settings.rerun and store.finished(job, [w.uuid for w in problem.workloads]):
            result.skipped = True
            return result
        solution = solution_for(job, problem, settings.config.device)
        traces = evaluate(problem, solution, settings.evaluation_config, sandboxes=sandboxes)
        if settings.hardware:
            traces = attach_sol(traces, problem, settings)
        result.trace_path = str(store.write(job, traces))
        for trace in traces:
            assert trace.evaluation is not None, "evaluate returns evaluated traces"
            status = trace.evaluation.status.value
            result.statuses[status] = result.statuses.get(status, 0) + 1
    except SolbenchError as error:
        result.error = str(error)
    finally:
        result.seconds = time.perf_counter() - started
    return result


def load_run_problem(job: Job, settings: RunSettings):
    """The job's problem with the run's workload tier (by the run's device when the run names none)."""
    from solbench.evaluation.config import resolve_device

    return load_problem(job.problem_dir, settings.tier, device=resolve_device(settings.config.device))


def solution_for(job: Job, problem, device: str | None = None):
    if job.solution == REFERENCE:
        return reference_solution(problem.definition, device)
    if job.solution == COMPILED_REFERENCE:
        return compiled_reference_solution(problem.definition, device=device)
    if job.solution_path is None:  # a remote job's message without the solution it names
        raise RunError(f"{job.key}: the job names solution {job.solution!r} but carries no solution file")
    return load_solution(job.solution_path)


def attach_sol(traces, problem, settings: RunSettings):
    """T_SOL (and scores, where T_b is known) on the run's hardware added to each trace."""
    from solbench.hardware import lookup
    from solbench.scoring import attach_sol as attach

    assert settings.hardware is not None, "T_SOL is attached only for a run that names its hardware"
    return attach(
        traces,
        problem,
        lookup(settings.hardware),
        settings.baselines,
        settings.config.data_roots,
        settings.config.precision,
    )


def sandbox_pool(settings: RunSettings) -> SandboxPool | None:
    """The worker's pool of warm spare sandboxes when the run asks for one (close it when the worker ends)."""
    return SandboxPool.for_config(settings.evaluation_config) if settings.warm_sandboxes else None
