"""T_SOL of a whole set of problems in one process (SOL-ExecBench's data set, a suite), and what it adds up to.

One process, because torch's import and its first dispatches cost seconds each time a process starts:
analysing 235 problems one `solbench sol` call at a time would spend more in starting up than in
analysing. Each problem's outcome is kept apart: one that fails (a missing data file, a reference that
cannot be analysed) says why and the next one runs.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from solbench.errors import SolbenchError
from solbench.hardware.spec import HardwareSpec
from solbench.sol.analysis import WorkloadSol, analyze_problem, with_published
from solbench.sol.published import AGREEMENT, ReferenceFigures


class ProblemSol(BaseModel):
    """One problem's analysis, or why it has none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    folder: str
    """The problem folder, relative to the set's root."""
    problem: str | None = None
    """The definition's name (None where the folder did not load)."""
    seconds: float
    """Wall-clock time of loading and analysing it."""
    workloads: list[WorkloadSol] = []
    error: str | None = None
    tier_note: str = ""
    """Where the CPU tier was asked for and the problem needs none: why its published workloads were analysed."""

    @property
    def ratios(self) -> list[float]:
        """solbench's T_SOL / the published figure, for the workloads that have one."""
        return [r.published.ratio for r in self.workloads if r.published is not None and r.published.ratio is not None]

    @property
    def agreeing(self) -> int:
        """How many of `ratios` lie within AGREEMENT ([0.5, 2])."""
        low, high = AGREEMENT
        return sum(1 for r in self.ratios if low <= r <= high)


def analyze_set(
    folders: list[Path],
    root: Path,
    hardware: HardwareSpec,
    *,
    precision: str = "auto",
    tier: str | None = None,
    data_roots: tuple[Path, ...] = (),
    baselines: ReferenceFigures | None = None,
) -> Iterator[ProblemSol]:
    """Each folder's analysis in turn (see `analyze_problem`), as it finishes; `tier` as `load_problem` takes it."""
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis

    make_inputs = partial(inputs_for_analysis, data_roots=data_roots)
    device = "cpu" if hardware.kind == "cpu" else "cuda"
    for folder in folders:
        name = _relative(folder, root)
        started = time.perf_counter()
        problem = None
        try:
            problem = load_problem(folder, tier, device=device)
            results = analyze_problem(problem, hardware, make_inputs=make_inputs, precision=precision)
            if baselines is not None:
                results = with_published(problem, results, hardware, baselines)
        except Exception as error:  # a solbench bug on one problem must not end the whole set either
            message = (
                str(error)
                if isinstance(error, SolbenchError)
                else f"internal error, please report it: {type(error).__name__}: {error}"
            )
            yield ProblemSol(
                folder=name,
                problem=problem.name if problem else None,
                seconds=time.perf_counter() - started,
                error=message,
            )
            continue
        yield ProblemSol(
            folder=name,
            problem=problem.name,
            seconds=time.perf_counter() - started,
            workloads=results,
            tier_note=problem.tier_note,
        )


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix() or folder.name
    except ValueError:
        return str(folder)


class SetSolSummary(BaseModel):
    """What a set's analyses add up to: counts, time per problem, and the ratios to the published figures."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    problems: int
    analysed: int
    failed: list[str]
    """`folder: error` for each problem without an analysis."""
    partial_coverage: int
    """Analysed problems with a workload whose coverage is not full (ops without a cost rule)."""
    workloads: int
    seconds_total: float
    seconds_median: float
    seconds_p90: float
    slowest: list[tuple[str, float]]
    """The problems above `SLOW_S`, slowest first."""
    published_workloads: int
    """Workloads with a published figure (and a ratio)."""
    ratio_median: float | None = None
    within_agreement: float | None = None
    """Share of those ratios within AGREEMENT ([0.5, 2])."""
    disagreements: dict[str, int] = {}
    """Class of disagreement (docs/speed-of-light.md) -> workloads, outside AGREEMENT."""


SLOW_S = 1.0
"""A problem analysed in more than this is listed by name in the summary (the target is about a second)."""


def summarize(analyses: list[ProblemSol]) -> SetSolSummary:
    seconds = sorted(a.seconds for a in analyses)
    done = [a for a in analyses if a.error is None]
    ratios = [r for a in done for r in a.ratios]
    classes = Counter(
        r.published.disagreement.split(":")[0].split(";")[0]
        for a in done
        for r in a.workloads
        if r.published is not None and r.published.disagreement
    )
    return SetSolSummary(
        problems=len(analyses),
        analysed=len(done),
        failed=[f"{a.folder}: {a.error}" for a in analyses if a.error],
        partial_coverage=sum(1 for a in done if not all(r.coverage.full for r in a.workloads)),
        workloads=sum(len(a.workloads) for a in done),
        seconds_total=sum(seconds),
        seconds_median=statistics.median(seconds) if seconds else 0.0,
        seconds_p90=percentile(seconds, 0.9) if seconds else 0.0,
        slowest=sorted(((a.folder, a.seconds) for a in analyses if a.seconds > SLOW_S), key=lambda t: -t[1]),
        published_workloads=len(ratios),
        ratio_median=statistics.median(ratios) if ratios else None,
        within_agreement=sum(a.agreeing for a in done) / len(ratios) if ratios else None,
        disagreements=dict(classes.most_common()),
    )


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile: the smallest of `values` with at least `share` of them at or below it."""
    ordered = sorted(values)
    return ordered[max(math.ceil(share * len(ordered)) - 1, 0)]
