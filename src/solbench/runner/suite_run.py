"""A suite run: one solution on every problem of a suite, resumably, its traces stored and summarised (`solbench run`).

Every option is checked before anything slow happens (probing this CPU, starting workers): a bad one raises a
SolbenchError and nothing runs. The jobs run on a local pool of worker processes (`pool.run_jobs`), or with
`broker` on the `solbench worker`s of the hardware (`celery_pool.run_jobs_on_broker`); either way the traces are
stored under the run folder by this process and the summary is recomputed from them, so a resumed run
summarises as a clean one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from solbench.evaluation.config import EvaluationConfig
from solbench.runner import pool
from solbench.runner.errors import NoProblemsMatch, RunOptionError
from solbench.runner.jobs import DEFAULT_SUITE, REFERENCE, plan_jobs
from solbench.runner.progress import BrokerWorkers, Notice, Progress, Skipped, Started, ignore, job_reports
from solbench.runner.run_options import check_counts, check_tier, checked_config
from solbench.runner.summary import RunSummary, summarize, write_summary
from solbench.runner.worker import JobResult, RunSettings
from solbench.scoring import Baselines, as_baselines


@dataclass(frozen=True)
class SuiteRun:
    """What a run did: its summary (also written to `summary_path`) and each job's result, in completion order."""

    summary: RunSummary
    summary_path: Path
    results: tuple[JobResult, ...]

    @property
    def failed(self) -> tuple[JobResult, ...]:
        """The jobs that wrote no traces: a bad problem or solution file, a worker process that died twice."""
        return tuple(result for result in self.results if result.error)


def run_suite(
    suite: Path = DEFAULT_SUITE,
    *,
    solution_name: str = REFERENCE,
    categories: Sequence[str] = (),
    names: Sequence[str] = (),
    limit: int | None = None,
    workers: int = pool.DEFAULT_WORKERS,
    out: Path | None = None,
    rerun: bool = False,
    hardware: str | None = None,
    baselines: Baselines | Path | None = None,
    config: EvaluationConfig | None = None,
    broker: str | None = None,
    warm_sandboxes: bool = False,
    tier: str | None = None,
    progress: Progress | None = None,
) -> SuiteRun:
    """Evaluate the solution `solution_name` on every problem of `suite` (a suite folder or one problem), write the
    traces and `summary.json` under `out` (default: runs/<suite>-<solution_name>) and return the summary.

    `solution_name`: ``reference`` (the problem's own reference), ``reference-compiled``, or a file each problem
    ships (solutions/NAME.json, solution_NAME.json); problems without it are skipped (`Skipped`). `categories`
    match a problem's set, `names` its name by substring; `limit` caps the problems. A problem finished in an
    earlier run of the same folder is skipped unless `rerun`. T_SOL is on `hardware` (default: `local` on the
    CPU, probed first where no probe is stored; on a GPU, none and so no scores), T_b from `baselines`, else the
    reference timed in the same run. `tier`: ``gpu``, ``cpu`` or ``all`` (default: by device).
    """
    progress = progress or ignore
    config = checked_config(config)
    loaded_baselines = as_baselines(baselines)
    check_counts(workers=workers, limit=limit)
    check_tier(tier)
    jobs, notes = plan_jobs(
        suite, solutions=[solution_name], categories=list(categories) or None, names=list(names) or None, limit=limit
    )
    if not jobs:
        raise NoProblemsMatch(suite, list(categories), list(names))
    _check_broker(broker, warm_sandboxes=warm_sandboxes, tier=tier, hardware=hardware, device=config.device)
    sol_hardware = _sol_hardware(hardware, config.device, progress)
    for note in notes:
        progress(Skipped(note))
    out = out or Path("runs") / f"{suite.resolve().name}-{solution_name}"
    settings = RunSettings(
        config=config,
        out=out,
        hardware=sol_hardware,
        baselines=loaded_baselines,
        rerun=rerun,
        warm_sandboxes=warm_sandboxes,
        tier=tier,
    )
    if broker:
        assert sol_hardware is not None, "_check_broker refuses a broker run without --hardware"
        run = _broker_runner(broker, sol_hardware, progress)
    else:
        run = partial(pool.run_jobs, workers=workers)
    progress(Started(tuple(jobs), (solution_name,), out, sol_hardware))
    on_done, on_retry = job_reports(progress, len(jobs))
    results = run(jobs, settings, on_done=on_done, on_retry=on_retry)
    failed = [result for result in results if result.error]
    summary = replace(
        summarize(out, sol_hardware, loaded_baselines),
        errors=[f"{result.job.key}: {result.error}" for result in failed],
        lost_to_dead_workers=sum(result.worker_died is not None for result in failed),
    )
    return SuiteRun(summary, write_summary(out, summary), tuple(results))


def _check_broker(
    broker: str | None, *, warm_sandboxes: bool, tier: str | None, hardware: str | None, device: str
) -> None:
    """A run on a broker's workers: no spare sandboxes here, the GPU tier only, and the hardware they serve named."""
    if not broker:
        return
    if warm_sandboxes:
        raise RunOptionError(
            "warm_sandboxes",
            "spares are kept by local worker processes; on a broker the remote `solbench worker`s run the jobs",
            conflicts_with="broker",
        )
    if tier is not None and tier != "gpu":
        raise RunOptionError(
            "tier",
            "remote `solbench worker`s receive workload.jsonl only (the GPU tier); run "
            "without a broker for the CPU tier",
            conflicts_with="broker",
        )
    if hardware is None and device != "cpu":
        raise RunOptionError(
            "hardware",
            "a run on a broker needs the hardware whose workers run the jobs (`solbench hw list`)",
            conflicts_with="broker",
        )


def _sol_hardware(hardware: str | None, device: str, progress: Progress) -> str | None:
    """The id of the hardware T_SOL is derived for; None on a GPU when none is named (no SOL scores then).

    On the CPU the default is the CPU itself (`local`), probed now if this machine has no stored probe.
    """
    from solbench.hardware import LOCAL_ID, lookup
    from solbench.hardware.local import probe_if_missing

    if hardware is None and device != "cpu":
        return None
    chosen = hardware or LOCAL_ID
    probe_if_missing(chosen, lambda text: progress(Notice(text)))
    return lookup(chosen).id


def _broker_runner(broker: str, hardware: str, progress: Progress) -> Callable[..., list[JobResult]]:
    """`run_jobs_on_broker` for this broker and hardware, after telling which workers will take the jobs."""
    from solbench.runner.celery_app import BrokerSettings
    from solbench.runner.celery_pool import run_jobs_on_broker, workers_serving

    broker_settings = BrokerSettings(broker)
    progress(BrokerWorkers(broker, hardware, tuple(workers_serving(broker_settings, hardware))))

    def run(jobs, settings, on_done=None, on_retry=None):
        return run_jobs_on_broker(
            jobs, settings, broker_settings, hardware=hardware, on_done=on_done, on_retry=on_retry
        )

    return run
