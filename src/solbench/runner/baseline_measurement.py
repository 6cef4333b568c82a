"""Measuring T_b for every workload of a suite on this machine, stored as versioned data (`solbench baseline`).

The candidates (the reference eager, under torch.compile, and any baseline solutions the suite ships) run as
the jobs of a suite run, their traces kept in a work folder so an interrupted measurement resumes; per workload
T_b is the fastest candidate that PASSED (`baseline.fastest_correct`). A `BaselineSearch` (an agent's
optimisation loop, `solbench.optimize.AgentSearch`) may add its best candidate per problem; then the result is
merged into the baselines file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from solbench.evaluation.config import EvaluationConfig
from solbench.runner import pool
from solbench.runner.baseline import fastest, fastest_correct, merge
from solbench.runner.errors import NoProblemsMatch, RunOptionError
from solbench.runner.jobs import COMPILED_REFERENCE, DEFAULT_SUITE, REFERENCE, Job, plan_jobs
from solbench.runner.progress import Notice, Progress, Skipped, Started, ignore, job_reports
from solbench.runner.run_options import check_counts, checked_config
from solbench.runner.worker import RunSettings
from solbench.scoring.baselines import Baseline, Baselines, load_baselines, save_baselines
from solbench.version import __version__


class BaselineSearch(Protocol):
    """More T_b candidates, searched per problem once the suite's candidates are timed."""

    def __call__(
        self, jobs: list[Job], hardware: str, config: EvaluationConfig, work: Path, progress: Progress
    ) -> tuple[list[Baseline], list[str]]:
        """A Baseline per workload the best candidate of a problem PASSED, and a note per problem without one.

        `jobs` holds one job per problem (its reference); `hardware` is the id the baselines are for, `config`
        how candidates are evaluated, `work` the measurement's folder (a search keeps its own state under it).
        """
        ...


@dataclass(frozen=True)
class BaselineMeasurement:
    """What a measurement found, and the baselines file it was merged into."""

    measured: tuple[Baseline, ...]
    """T_b per workload measured now (the fastest candidate that PASSED there)."""
    missing: tuple[str, ...]
    """Workloads no candidate passed, and problems a search found nothing for: they have no new T_b."""
    output: Path
    baselines: Baselines
    """Everything `output` holds now: what it held before, with the workloads measured now replaced."""


def measure_baselines(
    suite: Path = DEFAULT_SUITE,
    *,
    output: Path,
    hardware: str | None = None,
    categories: Sequence[str] = (),
    names: Sequence[str] = (),
    solution_names: Sequence[str] = (),
    compile_reference: bool = True,
    limit: int | None = None,
    workers: int = pool.DEFAULT_WORKERS,
    work: Path | None = None,
    rerun: bool = False,
    config: EvaluationConfig | None = None,
    search: BaselineSearch | None = None,
    progress: Progress | None = None,
) -> BaselineMeasurement:
    """T_b per workload of `suite` on `hardware` (default: `local` on the CPU; required on a GPU), merged into the
    baselines file `output` (created, or merged into: entries measured now replace the same workload's).

    Candidates: the reference eager, under torch.compile (unless not `compile_reference`), the solutions each
    problem ships under `solution_names` and, with `search`, what it finds per problem. Their traces stay in
    `work` (default: runs/baseline-<hardware>) and are reused unless `rerun`. `config` sets how candidates are
    evaluated (the reference is never timed beside them); `categories`, `names` and `limit` choose problems.
    """
    progress = progress or ignore
    config = checked_config(config, time_reference=False)
    check_counts(workers=workers, limit=limit)
    if hardware is None and config.device != "cpu":
        raise RunOptionError("hardware", "required on a GPU: name the spec these baselines are for (e.g. H200)")
    existing = load_baselines(output).entries() if output.exists() else []
    candidates = [REFERENCE] + ([COMPILED_REFERENCE] if compile_reference else []) + list(solution_names)
    jobs, notes = plan_jobs(
        suite, solutions=candidates, categories=list(categories) or None, names=list(names) or None, limit=limit
    )
    if not jobs:
        raise NoProblemsMatch(suite, list(categories), list(names))
    spec = _hardware(hardware, progress)
    for note in notes:
        progress(Skipped(note))
    work = work or Path("runs") / f"baseline-{spec.id.lower()}"
    progress(Started(tuple(jobs), tuple(candidates), work, spec.id))
    on_done, on_retry = job_reports(progress, len(jobs))
    pool.run_jobs(
        jobs, RunSettings(config=config, out=work, rerun=rerun), workers=workers, on_done=on_done, on_retry=on_retry
    )
    measured, missing = fastest_correct(work, spec.id, candidates)
    if search is not None:
        measured, missing = _with_search(
            search,
            [job for job in jobs if job.solution == REFERENCE],
            spec.id,
            config,
            work,
            measured,
            missing,
            progress,
        )
    entries = merge(existing, measured)
    save_baselines(
        output,
        entries,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        harness_version=__version__,
        hardware_description=spec.name,
    )
    return BaselineMeasurement(tuple(measured), tuple(missing), output, Baselines(entries))


def _hardware(hardware: str | None, progress: Progress):
    """The spec the baselines are for (`local` when none is named: this CPU, probed first if need be)."""
    from solbench.hardware import LOCAL_ID, lookup
    from solbench.hardware.local import probe_if_missing

    probe_if_missing(hardware or LOCAL_ID, lambda text: progress(Notice(text)))
    return lookup(hardware or LOCAL_ID)


def _with_search(
    search: BaselineSearch,
    jobs: list[Job],
    hardware_id: str,
    config: EvaluationConfig,
    work: Path,
    measured: list[Baseline],
    missing: list[str],
    progress: Progress,
) -> tuple[list[Baseline], list[str]]:
    """The search's best candidates join the candidates' latencies (fastest wins); a workload it found is no longer
    missing."""
    found, notes = search(jobs, hardware_id, config, work, progress)
    searched = {(b.definition, b.workload) for b in found}
    still_missing = [note for note in missing if not any(f"{d} workload {w}:" in note for d, w in searched)]
    return fastest(measured, found), still_missing + notes
