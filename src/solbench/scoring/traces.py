"""Scoring traces on a hardware: T_SOL from each trace or from analysing its problem, T_b, and the report.

`score_traces` is the entry point every client calls (`solbench score`, `solbench run`'s summary,
the Python API); `attach_sol` writes T_SOL and S into traces as they are made (`eval --hardware`, `run`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import partial
from os import PathLike
from pathlib import Path
from typing import cast

from solbench.hardware import lookup
from solbench.hardware.spec import HardwareSpec
from solbench.scoring.aggregate import IMPLAUSIBLE, aggregate, score_trace
from solbench.scoring.baselines import Baselines, as_baselines
from solbench.scoring.report import ScoreReport, SetMissing
from solbench.scoring.sol_score import SPEED_OF_LIGHT_RULE
from solbench.spec.inputs import inputs_for_analysis
from solbench.spec.problem import Problem, find_problem_folders, load_problem
from solbench.spec.problem_set import problem_set
from solbench.spec.trace import EvaluationStatus, SolRecord, Trace
from solbench.spec.trace_files import read_traces


def score_traces(
    traces: Iterable[Trace],
    hardware: str | HardwareSpec | None,
    *,
    problems: Mapping[str, Problem] | Iterable[Problem] | None = None,
    baselines: Baselines | PathLike[str] | str | None = None,
    sets: Mapping[str, str] | None = None,
    data_roots: tuple[Path, ...] = (),
    precision: str = "auto",
    missing: SetMissing = "exclude",
) -> ScoreReport:
    """Score `traces` on `hardware` (an id such as ``"H100_SXM"``, ``"local"``, or a HardwareSpec).

    T_SOL of a trace is its own ``evaluation.solbench.sol`` record when that is for the same hardware;
    else, when its problem is among `problems` (by definition name) and lists its workload, the analysis
    of that workload; else none, and a PASSED workload is unscored (``ScoreReport.unscored_policy``).
    T_b is the `baselines` entry (a Baselines or the path of a baselines file), else the reference
    timed in the same run. A problem's set is `sets[definition]`, else `problem_set` of its tags when
    it is among `problems`, else ``all``. Without `hardware` nothing is scored; the counts remain.
    `precision` is the precision policy of analysed T_SOLs (sol/precision.py). A set's total follows
    `aggregate.set_total` under `missing` (default ``exclude``: a problem without a score is left out).

    Raises HardwareError for an unknown hardware id, ScoreError for a bad baselines file, and the
    analyzer's errors when a problem cannot be analysed.
    """
    spec = lookup(hardware) if isinstance(hardware, str) else hardware
    by_name = _by_name(problems)
    loaded = as_baselines(baselines)
    traces = list(traces)
    analysed = _analysed_t_sols(traces, spec, by_name, data_roots, precision) if spec is not None else {}
    scores = []
    for trace in traces:
        t_sol, bound = _t_sol(trace, spec, analysed)
        scores.append(score_trace(trace, t_sol, loaded, spec.id if spec else None, bound))
    all_sets = {name: problem_set(problem.definition.tags) for name, problem in by_name.items()}
    all_sets.update(sets or {})
    return aggregate(scores, spec.id if spec else None, all_sets, missing=missing)


def score_trace_file(
    path: Path,
    hardware: str,
    *,
    baselines: Path | None = None,
    problem_roots: Iterable[Path] = (),
    precision: str = "auto",
) -> ScoreReport:
    """`solbench score`: the traces of a JSONL file, with the problems found under `problem_roots` for
    T_SOL and for sets (a problem's set follows `problem_set`, its root being the suite root)."""
    traces = read_traces(path)
    problems: dict[str, Problem] = {}
    sets: dict[str, str] = {}
    for root in problem_roots:
        for folder in find_problem_folders(root):
            problem = load_problem(folder, "all")  # traces may come from either tier
            problems[problem.name] = problem
            sets[problem.name] = problem_set(problem.definition.tags, folder, root)
    return score_traces(traces, hardware, problems=problems, baselines=baselines, sets=sets, precision=precision)


def recorded_t_sol(trace: Trace, hardware_id: str) -> float | None:
    """T_SOL stored in the trace for this hardware (eval --hardware, run), or None."""
    details = trace.evaluation.solbench if trace.evaluation else None
    if details and details.sol and details.sol.hardware.upper() == hardware_id.upper():
        return details.sol.t_sol_ms
    return None


def attach_sol(
    traces: list[Trace],
    problem: Problem,
    hardware: HardwareSpec,
    baselines: Baselines | None = None,
    data_roots: tuple[Path, ...] = (),
    precision: str = "auto",
) -> list[Trace]:
    """Each trace gains `solbench.sol`: T_SOL on `hardware` (under the precision policy `precision`, the
    evaluation's) and, where T_b and T_k are known, the SOL score.

    A PASSED trace measured below the speed-of-light floor becomes IMPLAUSIBLE (rule ``speed_of_light``, the
    failure line giving T_k, the floor, T_SOL and the binding roof), exactly as `score_traces` would judge it
    later on the same hardware."""
    analyses = {r.workload.uuid: r for r in _analyse(problem, hardware, data_roots, precision)}
    updated = []
    for trace in traces:
        analysis = at_admitted_precision(analyses[trace.workload.uuid], trace, hardware)
        score = score_trace(trace, analysis.t_sol_ms, baselines, hardware.id, analysis.bound)
        evaluation = trace.evaluation
        assert evaluation is not None and evaluation.solbench is not None, "attach_sol takes evaluated traces"
        refused = score.status == IMPLAUSIBLE and evaluation.status is not EvaluationStatus.IMPLAUSIBLE
        record = SolRecord(
            hardware=hardware.id,
            t_sol_ms=analysis.t_sol_ms,
            bound=analysis.bound,
            coverage_full=analysis.coverage.full,
            score=0.0
            if score.status == IMPLAUSIBLE
            else (score.score if score.t_baseline_ms and score.t_kernel_ms else None),
            baseline_ms=score.t_baseline_ms,
            baseline_source=score.baseline_source,
            implausible=score.implausible,
            floor_ms=score.floor_ms,
            precision=analysis.precision,
        )
        update: dict[str, object] = {"sol": record}
        if refused:
            update.update(failed_rule=SPEED_OF_LIGHT_RULE, failure=score.note)
        details = evaluation.solbench.model_copy(update=update)
        changes: dict[str, object] = {"solbench": details}
        if refused:
            changes.update(
                status=EvaluationStatus.IMPLAUSIBLE, log=f"[solbench] {IMPLAUSIBLE}: {score.note}\n{evaluation.log}"
            )
        updated.append(trace.model_copy(update={"evaluation": evaluation.model_copy(update=changes)}))
    return updated


def _by_name(problems: Mapping[str, Problem] | Iterable[Problem] | None) -> dict[str, Problem]:
    if problems is None:
        return {}
    if isinstance(problems, Mapping):
        return dict(cast("Mapping[str, Problem]", problems))  # not an Iterable[Problem] that is a Mapping
    return {problem.name: problem for problem in problems}


def _t_sol(
    trace: Trace, hardware: HardwareSpec | None, analysed: dict[tuple[str, str], tuple[float, str]]
) -> tuple[float | None, str | None]:
    """T_SOL on `hardware` and its binding roof: the trace's own record, else the analysis; (None, None)."""
    if hardware is None:
        return None, None
    recorded = recorded_t_sol(trace, hardware.id)
    if recorded is not None:
        return recorded, None  # score_trace reads the bound from the same record
    return analysed.get((trace.definition, trace.workload.uuid), (None, None))


def _analysed_t_sols(
    traces: list[Trace],
    hardware: HardwareSpec,
    problems: Mapping[str, Problem],
    data_roots: tuple[Path, ...],
    precision: str = "auto",
) -> dict[tuple[str, str], tuple[float, str]]:
    """T_SOL and its binding roof per (definition, workload uuid) for the traces that record none on `hardware` and
    whose problem lists their workload; only those workloads are analysed, each problem's reference imported once."""
    wanted: dict[str, dict[str, Trace]] = {}
    for trace in traces:
        if trace.definition in problems and recorded_t_sol(trace, hardware.id) is None:
            wanted.setdefault(trace.definition, {})[trace.workload.uuid] = trace
    found: dict[tuple[str, str], tuple[float, str]] = {}
    for name, by_uuid in wanted.items():
        needed = tuple(w for w in problems[name].workloads if w.uuid in by_uuid)
        if needed:
            for result in _analyse(replace(problems[name], workloads=needed), hardware, data_roots, precision):
                result = at_admitted_precision(result, by_uuid[result.workload.uuid], hardware)
                found[(name, result.workload.uuid)] = (result.t_sol_ms, result.bound)
    return found


def at_admitted_precision(analysis, trace: Trace, hardware: HardwareSpec):
    """`analysis` with fp32 matrix work charged at the precision the trace's evaluation admitted, where that is
    lower than the one the analysis charged: a kernel the downgrade rule accepted at bf16 must not be measured
    below T_SOL because the analysis (another policy, or a workload too large to check here) assumed fp32."""
    from solbench.sol.analysis import apply_precision
    from solbench.sol.precision import MATRIX_PRECISIONS

    details = trace.evaluation.solbench if trace.evaluation else None
    admitted = details.precision if details else None
    if admitted is None or admitted.policy != "tolerance":
        return analysis
    charged = analysis.precision.matrix_precision if analysis.precision else "fp32"
    if MATRIX_PRECISIONS.index(admitted.matrix_precision) < MATRIX_PRECISIONS.index(charged):
        return apply_precision(analysis, hardware, admitted)
    return analysis


def _analyse(problem: Problem, hardware: HardwareSpec, data_roots: tuple[Path, ...], precision: str = "auto") -> list:
    from solbench.sol import analyze_problem  # imports torch: only when a problem is analysed

    return analyze_problem(
        problem, hardware, make_inputs=partial(inputs_for_analysis, data_roots=data_roots), precision=precision
    )
