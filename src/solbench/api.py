"""The public Python API: the same workflows, with the same defaults, as the CLI.

`import solbench` loads none of this (nor torch): `solbench/__init__.py` imports this module the
first time one of its names is used. Paths and loaded objects are accepted alike, so a script can
go from a folder on disk to a score in four calls:

    problem = solbench.load_problem("examples/rmsnorm")
    solution = solbench.load_solution("examples/rmsnorm/solution_pytorch.json")
    traces = solbench.evaluate(problem, solution)
    report = solbench.score(traces, hardware="H100_SXM", problems=[problem])

and from a suite folder to a run's summary, or to baselines, in one: `run_suite` and `baseline`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from solbench.evaluation.config import EvaluationConfig
from solbench.runner.jobs import DEFAULT_SUITE, REFERENCE
from solbench.runner.pool import DEFAULT_WORKERS
from solbench.spec import Problem, Solution, Trace
from solbench.spec import load_problem as _load_problem
from solbench.spec import load_solution as _load_solution

if TYPE_CHECKING:
    from solbench.evaluation import ReferenceTimings, SandboxPool
    from solbench.hardware import HardwareSpec
    from solbench.runner.baseline_measurement import BaselineMeasurement, BaselineSearch
    from solbench.runner.progress import RunEvent
    from solbench.runner.suite_run import SuiteRun
    from solbench.scoring import Baselines, ScoreReport
    from solbench.sol import WorkloadSol

PathArg = str | PathLike[str]


def load_problem(path: PathArg, tier: str | None = None, *, device: str | None = None) -> Problem:
    """A problem folder (definition.json + workload.jsonl); raises SpecError naming the file and field.

    `tier`: ``gpu`` (workload.jsonl), ``cpu`` (workload.cpu.jsonl) or ``all``; None picks the CPU tier when
    `device` (default: the one an evaluation would use here) is the CPU and the folder has one, else gpu.
    """
    return _load_problem(Path(path), tier, device=device)


def load_solution(path: PathArg) -> Solution:
    """A solution JSON file; raises SpecError naming the file and field."""
    return _load_solution(Path(path))


def evaluate(
    problem: Problem | PathArg,
    solution: Solution | PathArg,
    *,
    config: EvaluationConfig | None = None,
    hardware: str | HardwareSpec | None = None,
    baselines: Baselines | PathArg | None = None,
    cache: PathArg | None = None,
    refresh_cache: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
    sandboxes: SandboxPool | None = None,
    reference_timings: ReferenceTimings | None = None,
) -> list[Trace]:
    """Evaluate `solution` on every workload of `problem` in a sandbox: one Trace per workload, in order.

    `config` defaults to `EvaluationConfig()`, the defaults of `solbench eval` too. With `hardware`,
    each trace also records T_SOL on it and, where T_b is known (`baselines`, else the reference
    timed in the same run), the SOL score. With `cache` (a folder), an identical earlier evaluation
    is returned instead of measuring again; `refresh_cache` measures and overwrites it.
    For many candidates of one problem: `sandboxes` (`solbench.evaluation.warm_sandboxes(config)`) hands
    each evaluation a warm spare sandbox no solution ran in, and `reference_timings`
    (`solbench.evaluation.ReferenceTimings()`) times the reference once per workload and reuses it.
    A solution's failure is a trace status; bad input raises a SolbenchError before anything runs.
    """
    from solbench.evaluation import evaluate as evaluate_solution
    from solbench.scoring import as_baselines, attach_sol

    config = config or EvaluationConfig()
    if not isinstance(problem, Problem):
        from solbench.evaluation.config import resolve_device

        problem = load_problem(problem, device=resolve_device(config.device))
    solution = solution if isinstance(solution, Solution) else load_solution(solution)
    spec = _hardware(hardware) if hardware is not None else None  # an unknown id fails before evaluating
    loaded_baselines = as_baselines(baselines)
    traces = evaluate_solution(
        problem,
        solution,
        config,
        progress,
        cache=Path(cache) if cache else None,
        refresh_cache=refresh_cache,
        sandboxes=sandboxes,
        reference_timings=reference_timings,
    )
    if spec is None:
        return traces
    return attach_sol(traces, problem, spec, loaded_baselines, config.data_roots, config.precision)


def analyze(
    problem: Problem | PathArg,
    hardware: str | HardwareSpec,
    *,
    explain: bool = False,
    data_roots: Sequence[PathArg] = (),
    precision: str = "auto",
) -> list[WorkloadSol]:
    """T_SOL of every workload of `problem` on `hardware`, derived from the reference without running it.

    `explain` adds the per-op rows (`WorkloadSol.ops`). Ops the cost model does not know are listed in
    `WorkloadSol.coverage`, never counted as free. `precision` is the precision policy (``auto``, ``strict``,
    ``tolerance``; see `EvaluationConfig.precision`).
    """
    from solbench.sol import analyze_problem
    from solbench.spec.inputs import inputs_for_analysis

    problem = problem if isinstance(problem, Problem) else load_problem(problem)
    roots = tuple(Path(root) for root in data_roots)
    return analyze_problem(
        problem,
        _hardware(hardware),
        explain=explain,
        make_inputs=partial(inputs_for_analysis, data_roots=roots),
        precision=precision,
    )


def score(
    traces: Iterable[Trace],
    hardware: str | HardwareSpec,
    *,
    problems: Iterable[Problem] = (),
    baselines: Baselines | PathArg | None = None,
    precision: str = "auto",
) -> ScoreReport:
    """SOL scores per workload, per problem and per set: the aggregation `solbench score` and `run` use.

    T_SOL comes from each trace's own record for this hardware (`evaluate(..., hardware=)`), else from
    analysing its problem when it is among `problems`; a PASSED workload with neither is unscored and
    left out of its problem's mean (`ScoreReport.unscored_policy`).
    """
    from solbench.scoring import score_traces

    return score_traces(traces, _hardware(hardware), problems=list(problems), baselines=baselines, precision=precision)


def run_suite(
    suite: PathArg = DEFAULT_SUITE,
    *,
    solution_name: str = REFERENCE,
    categories: Sequence[str] = (),
    names: Sequence[str] = (),
    limit: int | None = None,
    workers: int = DEFAULT_WORKERS,
    out: PathArg | None = None,
    rerun: bool = False,
    hardware: str | None = None,
    baselines: Baselines | PathArg | None = None,
    config: EvaluationConfig | None = None,
    broker: str | None = None,
    warm_sandboxes: bool = False,
    tier: str | None = None,
    progress: Callable[[RunEvent], None] | None = None,
) -> SuiteRun:
    """Evaluate one solution on every problem of a suite, resumably, as `solbench run`: traces and `summary.json`
    under `out` (default: runs/<suite>-<solution_name>); returns the `SuiteRun` (its `summary`, each job's result).

    `suite` is a suite folder or one problem's. `solution_name`: ``reference``, ``reference-compiled``, or the
    solution file each problem ships (solutions/NAME.json, solution_NAME.json); problems without it are skipped.
    `categories` match a problem's set, `names` its name by substring, `limit` caps the problems; `workers`
    processes evaluate in parallel, or with `broker` (a Redis URL) the `solbench worker`s of `hardware` do.
    A problem finished in an earlier run of `out` is skipped unless `rerun`. T_SOL is on `hardware` (default:
    ``local`` on the CPU, probed first where no probe is stored; on a GPU, none), T_b from `baselines` (a file
    or a loaded `Baselines`), else the reference timed in the same run. `config` defaults to `EvaluationConfig()`,
    `tier` (``gpu``, ``cpu``, ``all``) to the device's. `progress` hears each event (`solbench.runner.progress`).
    A problem's failure is a job error in the result; bad input raises a SolbenchError before anything runs.
    """
    from solbench.runner.suite_run import run_suite as run
    from solbench.scoring import as_baselines

    return run(
        Path(suite),
        solution_name=solution_name,
        categories=categories,
        names=names,
        limit=limit,
        workers=workers,
        out=Path(out) if out is not None else None,
        rerun=rerun,
        hardware=hardware,
        baselines=as_baselines(baselines),
        config=config,
        broker=broker,
        warm_sandboxes=warm_sandboxes,
        tier=tier,
        progress=progress,
    )


def baseline(
    suite: PathArg = DEFAULT_SUITE,
    *,
    output: PathArg,
    hardware: str | None = None,
    categories: Sequence[str] = (),
    names: Sequence[str] = (),
    solution_names: Sequence[str] = (),
    compile_reference: bool = True,
    limit: int | None = None,
    workers: int = DEFAULT_WORKERS,
    work: PathArg | None = None,
    rerun: bool = False,
    config: EvaluationConfig | None = None,
    search: BaselineSearch | None = None,
    progress: Callable[[RunEvent], None] | None = None,
) -> BaselineMeasurement:
    """Measure T_b on this machine for every workload of a suite and merge it into the baselines file `output`, as
    `solbench baseline`; returns the `BaselineMeasurement` (what was measured, what is missing, the file's
    `baselines`).

    Candidates: the reference eager, under torch.compile (unless not `compile_reference`), the solutions each
    problem ships under `solution_names`, and with `search` (`solbench.optimize.AgentSearch(agent, rounds=N)`)
    the best candidate of an agent's loop per problem; per workload the fastest that PASSED is T_b. `hardware`
    is the id they are for (default: ``local`` on the CPU; required on a GPU). Their traces stay in `work`
    (default: runs/baseline-<hardware>) and are reused unless `rerun`. `config` (default `EvaluationConfig()`)
    sets how candidates are evaluated; `categories`, `names`, `limit` and `workers` as in `run_suite`.
    """
    from solbench.runner.baseline_measurement import measure_baselines

    return measure_baselines(
        Path(suite),
        output=Path(output),
        hardware=hardware,
        categories=categories,
        names=names,
        solution_names=solution_names,
        compile_reference=compile_reference,
        limit=limit,
        workers=workers,
        work=Path(work) if work is not None else None,
        rerun=rerun,
        config=config,
        search=search,
        progress=progress,
    )


def _hardware(hardware: str | HardwareSpec) -> HardwareSpec:
    from solbench.hardware import lookup

    return lookup(hardware) if isinstance(hardware, str) else hardware


__all__ = ["EvaluationConfig", "analyze", "baseline", "evaluate", "load_problem", "load_solution", "run_suite", "score"]
