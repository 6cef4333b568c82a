"""Putting T_SOL and the SOL score next to measured traces (solbench eval --hardware, solbench score)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

from pydantic import ValidationError

from solbench.evaluate.inputs import inputs_for_analysis
from solbench.hardware import lookup
from solbench.hardware.spec import HardwareSpec
from solbench.score import Baselines, ProblemScore, WorkloadScore, by_problem, by_set, load_baselines, score_trace
from solbench.sol import WorkloadSol, analyze_problem
from solbench.spec.errors import SpecError
from solbench.spec.problem import Problem, find_problem_folders, load_problem
from solbench.spec.trace import SolRecord, Trace

ALL = "all"


def attach_sol(traces: list[Trace], problem: Problem, hardware: HardwareSpec,
               baselines: Baselines | None = None, data_roots: tuple[Path, ...] = ()) -> list[Trace]:
    """Each trace gains `solbench.sol`: T_SOL on `hardware` and, where T_b is known, the SOL score."""
    analyses = {r.workload.uuid: r for r in analyze_problem(
        problem, hardware, make_inputs=partial(inputs_for_analysis, data_roots=data_roots))}
    updated = []
    for trace in traces:
        analysis = analyses[trace.workload.uuid]
        score = score_trace(trace, analysis.t_sol_ms, baselines, hardware.id)
        record = SolRecord(hardware=hardware.id, t_sol_ms=analysis.t_sol_ms, bound=analysis.bound,
                           coverage_full=analysis.coverage.full,
                           score=score.score if score.t_baseline_ms and score.t_kernel_ms else None,
                           baseline_ms=score.t_baseline_ms, baseline_source=score.baseline_source,
                           implausible=score.implausible)
        details = trace.evaluation.solbench.model_copy(update={"sol": record})
        updated.append(trace.model_copy(update={"evaluation": trace.evaluation.model_copy(
            update={"solbench": details})}))
    return updated


def read_traces(path: Path) -> list[Trace]:
    traces = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            traces.append(Trace.model_validate_json(line))
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            field = ".".join(str(p) for p in first["loc"])
            raise SpecError(path, field or None, first["msg"], line=number) from None
    return traces


@dataclass(frozen=True)
class ScoreReport:
    hardware: str
    workloads: list[WorkloadScore]
    problems: list[ProblemScore]
    sets: dict[str, float]

    def as_json(self) -> dict:
        return {"hardware": self.hardware, "sets": self.sets, "problems": [asdict(p) for p in self.problems],
                "workloads": [asdict(w) for w in self.workloads]}


def score_trace_file(path: Path, hardware_id: str, baselines_path: Path | None,
                     problem_roots: list[Path]) -> ScoreReport:
    hardware = lookup(hardware_id)
    traces = read_traces(path)
    baselines = load_baselines(baselines_path) if baselines_path else None
    problems = _find_problems(problem_roots)
    analyses: dict[str, dict[str, WorkloadSol]] = {}
    scores = []
    for trace in traces:
        t_sol = recorded_t_sol(trace, hardware.id)
        if t_sol is None and trace.definition in problems:
            if trace.definition not in analyses:
                analyses[trace.definition] = {r.workload.uuid: r for r in analyze_problem(
                    problems[trace.definition], hardware, make_inputs=inputs_for_analysis)}
            analysis = analyses[trace.definition].get(trace.workload.uuid)
            t_sol = analysis.t_sol_ms if analysis else None
        scores.append(score_trace(trace, t_sol, baselines, hardware.id))
    per_problem = by_problem(scores)
    return ScoreReport(hardware=hardware.id, workloads=scores, problems=per_problem,
                       sets=by_set(per_problem, partial(_set_of, problems)))


def recorded_t_sol(trace: Trace, hardware_id: str) -> float | None:
    """T_SOL stored in the trace for this hardware (eval --hardware, run), or None."""
    details = trace.evaluation.solbench if trace.evaluation else None
    if details and details.sol and details.sol.hardware.upper() == hardware_id.upper():
        return details.sol.t_sol_ms
    return None


def _find_problems(roots: list[Path]) -> dict[str, Problem]:
    """Problem folders under each root (or the root itself), by definition name."""
    found: dict[str, Problem] = {}
    for root in roots:
        for folder in find_problem_folders(root):
            problem = load_problem(folder)
            found[problem.name] = problem
    return found


def _set_of(problems: dict[str, Problem], definition: str) -> str:
    """A problem's set is its `set:NAME` tag, else its op_type, else "all"."""
    problem = problems.get(definition)
    if problem is None:
        return ALL
    tagged = problem.definition.tag("set")
    if tagged is not None:
        return tagged
    return problem.definition.op_type or ALL

