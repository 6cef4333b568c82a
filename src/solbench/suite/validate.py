"""`solbench validate`: is a problem fit to measure kernels with?

A problem can load and run and still measure nothing: an output that zeros or a constant would
match within the tolerance, an output that ignores its inputs (or one of them), workloads that
repeat each other, work the speed-of-light model cannot see. Each check here names what it found,
so a benchmark author can fix the problem before anyone's kernel is scored on it.

The reference is trusted code (the problem's own), so it runs in this process, on the CPU, at the
problem's smallest workload.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from solbench.errors import SolbenchError
from solbench.evaluation.correctness import (
    ExpectedOutput,
    as_comparable,
    measure_tolerance,
    reference_problem,
    within_tolerance,
)
from solbench.evaluation.reference import ReferenceFailure, ReferenceProgram
from solbench.hardware.spec import HardwareSpec
from solbench.sol import analyze_problem
from solbench.spec.inputs import InputContext, generate_inputs, inputs_for_analysis
from solbench.spec.problem import Problem, find_problem_folders, load_problem
from solbench.spec.workload import ScalarInput, Tolerance, Workload
from solbench.suite.golden_memory import GOLDEN_MEMORY_LIMIT, golden_run_bytes
from solbench.suite.reference_file import reference_mismatch
from solbench.suite.reference_workloads import smallest_workload, tie_check_workload

VALIDATION_SEEDS = (1234, 5678)
"""Two fixed input sets: validation must give the same answer every time it runs."""


@dataclass(frozen=True)
class ValidationFinding:
    """One thing `solbench validate` found wrong with a problem (not a guard rule's finding in a solution)."""

    check: str
    """``load``, ``definition``, ``workloads``, ``reference``, ``ill-conditioned``, ``degenerate``, ``sensitivity``,
    ``ties``, ``shards``, ``sol`` or ``suite``."""
    message: str
    severity: str = "error"
    """``error`` fails validation; ``warning`` is reported only."""


@dataclass
class ProblemValidation:
    path: str
    name: str | None = None
    set: str | None = None
    workloads: int = 0
    findings: list[ValidationFinding] = field(default_factory=list)
    reference_ms: float | None = None
    """The reference's time at the smallest workload on this CPU (one call, after a warm-up call)."""
    t_sol_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def add(self, check: str, message: str, severity: str = "error") -> None:
        self.findings.append(ValidationFinding(check, message, severity))


def validate_problem(folder: Path, hardware: HardwareSpec, tier: str = "all") -> ProblemValidation:
    """Checks of one problem over the workloads of `tier` (default: both tiers, so uuids are checked across them)."""
    started = time.perf_counter()
    report = ProblemValidation(path=str(folder))
    try:
        problem = load_problem(folder, tier)
    except SolbenchError as error:
        report.add("load", str(error))
        return report
    report.name, report.workloads = problem.name, len(problem.workloads)
    report.set = problem.definition.tag("set")
    for warning in problem.warnings:
        report.add("load", warning, "warning")
    _check_duplicate_workloads(problem, report)
    mismatch = reference_mismatch(folder, problem.definition.reference)
    if mismatch:
        report.add("reference", mismatch)
    _check_pass_and_op_type(problem, report)
    _check_reference(problem, report)
    _check_sol(problem, hardware, report)
    report.seconds = time.perf_counter() - started
    return report


def _check_duplicate_workloads(problem: Problem, report: ProblemValidation) -> None:
    seen: dict[str, str] = {}
    for workload in problem.workloads:
        key = json.dumps(
            {
                "axes": workload.axes,
                "inputs": {n: d.model_dump() for n, d in workload.inputs.items()},
                "tier": problem.tier_of(workload),
            },
            sort_keys=True,
        )  # a CPU tier may repeat a GPU size
        if key in seen:
            report.add("workloads", f"workload {workload.uuid} duplicates {seen[key]} (same axes and inputs)")
        seen.setdefault(key, workload.uuid)


def _check_pass_and_op_type(problem: Problem, report: ProblemValidation) -> None:
    """A backward problem's op_type says so: reports and `solbench reach` group problems by op_type, and a
    backward pass is a different kernel (about twice the forward's work) from the forward of the same op."""
    direction, op_type = problem.definition.tag("pass"), problem.definition.op_type or ""
    if direction == "backward" and "backward" not in op_type:
        report.add(
            "definition",
            f"pass:backward but op_type {op_type!r} does not say backward (e.g. {op_type + '_backward'!r})",
        )
    elif direction == "forward" and "backward" in op_type:
        report.add("definition", f"pass:forward but op_type {op_type!r} says backward")


def _check_reference(problem: Problem, report: ProblemValidation) -> None:
    workload = smallest_workload(problem)
    try:
        reference = ReferenceProgram(problem.definition, "cpu")
    except ReferenceFailure as error:
        report.add("reference", f"the reference does not import on the CPU: {error}")
        return
    try:
        _ReferenceChecks(problem, workload, reference, report).run()
    except ReferenceFailure as error:
        report.add("reference", f"workload {workload.uuid}: {error}")
    except SolbenchError as error:
        report.add("reference", f"workload {workload.uuid}: inputs could not be made: {error}")
    except Exception as error:  # the problem's own code (input generator) raised: report it, go on
        report.add("reference", f"workload {workload.uuid}: {_described(error)}")
    finally:
        reference.close()


class _ReferenceChecks:
    """Degeneracy and sensitivity checks on one workload, from two fixed input sets."""

    def __init__(self, problem: Problem, workload: Workload, reference: ReferenceProgram, report: ProblemValidation):
        self.problem, self.workload, self.reference, self.report = problem, workload, reference, report
        self.tolerance = workload.effective_tolerance
        self.axes = problem.axes_of(workload)
        # a scalar output has shape (), as in the evaluator
        self.expected = [
            ExpectedOutput(name, problem.definition.shape_of(spec, self.axes) or (), spec.dtype, "cpu")
            for name, spec in problem.definition.outputs.items()
        ]

    def _inputs(self, seed: int) -> list:
        context = InputContext(self.problem, self.workload, self.axes, "cpu")
        return generate_inputs(context, seed, self.reference.module)

    def run(self) -> None:
        first, second = (self._inputs(seed) for seed in VALIDATION_SEEDS)
        warm_up = self.reference.run(first)
        started = time.perf_counter()
        truth = self.reference.run(first)
        self.report.reference_ms = (time.perf_counter() - started) * 1e3
        problem = reference_problem(truth, self.expected, self.tolerance)
        if problem:
            self.report.add("reference", f"workload {self.workload.uuid}: {problem}")
            return
        if not _same_outputs(warm_up, truth):
            self.report.add("reference", "the reference gives different outputs for the same inputs", "warning")
        self._check_conditioning(first, truth)
        self._check_shards(first)
        other = self.reference.run(second)
        for index, spec in enumerate(self.expected):
            self._check_degenerate(spec.name, truth[index], other[index])
        self._check_sensitivity(first, second, truth)
        self._check_ties(first)

    def _check_shards(self, first: list) -> None:
        """A TP shard must be what one rank computes (see `solbench.suite.shards`)."""
        from solbench.suite.shards import shard_findings, shard_sizes, sharded_axes

        definition = self.problem.definition
        axes = sharded_axes(definition)
        if not axes:
            return
        sizes = shard_sizes(definition, self.axes)
        if not sizes:
            self.report.add(
                "shards",
                f"sharded axes {', '.join(axes)} not checked: each has the size of another "
                "axis at the smallest workload",
                "warning",
            )
            return
        for message in shard_findings(lambda: self.reference.run(first), sizes):
            self.report.add("shards", message)

    def _check_ties(self, first: list) -> None:
        """An arbitrary order must not decide the output (see `solbench.suite.ties`)."""
        from solbench.suite.ties import one_ulp_apart, recorded_selections, symmetric_axes, unknown_symmetric_axes

        definition = self.problem.definition
        for name in unknown_symmetric_axes(definition):
            self.report.add("ties", f"tag symmetric:{name} names no axis of the definition")
        names = list(definition.outputs)
        axes = symmetric_axes(definition)
        if axes:
            self._check_symmetric_axes(axes, names)
            return
        selections, truth = recorded_selections(lambda: self.reference.run(first))
        tied = [s for s in selections if s.tied > 0]
        if not tied:
            return
        outputs = self.reference.run(one_ulp_apart(first))
        chosen = ", ".join(f"{s.op} on {s.dtype} ({s.tied:.1%} of rows tied at the cut)" for s in tied)
        for name, out, ref in zip(names, outputs, truth):
            if not within_tolerance(out, ref, self.tolerance):
                self.report.add(
                    "ties",
                    f"workload {self.workload.uuid}: output {name!r} leaves the tolerance when the "
                    f"inputs move by one ulp (matches {_matched_ratio(out, ref, self.tolerance):.1%}); the "
                    f"reference selects among tied values ({chosen}); declare the axis whose order is "
                    "arbitrary (tag symmetric:AXIS) to check it",
                    "warning",
                )

    def _check_symmetric_axes(self, axes: list[str], names: list[str]) -> None:
        """Reverse each declared axis at a workload large enough for rare ties to show."""
        import torch

        from solbench.suite.ties import permuted_inputs, unpermuted_outputs

        definition = self.problem.definition
        workload = tie_check_workload(self.problem)
        values = self.problem.axes_of(workload)
        inputs = generate_inputs(
            InputContext(self.problem, workload, values, "cpu"), VALIDATION_SEEDS[0], self.reference.module
        )
        truth = self.reference.run(inputs)
        tolerance = workload.effective_tolerance
        for axis in axes:
            order = torch.arange(values[axis] - 1, -1, -1)
            outputs = unpermuted_outputs(
                definition, self.reference.run(permuted_inputs(definition, inputs, axis, order)), axis, order
            )
            for name, out, ref in zip(names, outputs, truth):
                if not within_tolerance(out, ref, tolerance):
                    self.report.add(
                        "ties",
                        f"workload {workload.uuid}: output {name!r} with the {axis} axis in "
                        "reverse order (the same computation) matches "
                        f"{_matched_ratio(out, ref, tolerance):.1%} of the reference, "
                        f"{tolerance.required_matched_ratio:.0%} required: ties decide it (select on "
                        "float32 scores, or on scores separated by a margin)",
                    )

    def _check_conditioning(self, first: list, truth: list) -> None:
        """The tolerance must tell an honest change of accumulation order from an error (suite/conditioning.py):
        the reference at another thread count, and the float64 result, measured against it."""
        from solbench.suite.conditioning import conditioning_findings

        for finding in conditioning_findings(self.reference, first, truth, self.expected, self.tolerance):
            self.report.add("ill-conditioned", f"workload {self.workload.uuid}: {finding.message}", finding.severity)

    def _check_degenerate(self, name: str, truth, other) -> None:
        import torch

        if truth.numel() == 0:
            self.report.add("degenerate", f"output {name!r} is empty at the smallest workload", "warning")
            return
        if within_tolerance(torch.zeros_like(truth), truth, self.tolerance):
            self.report.add("degenerate", f"output {name!r}: all zeros would pass the tolerance")
            return
        values = as_comparable(truth)
        if values.numel() > 1:  # one value is its own constant; the check on other inputs below still applies
            constant = torch.full_like(
                values,
                float(values[torch.isfinite(values)].float().mean()) if bool(torch.isfinite(values).any()) else 0.0,
            )
            if within_tolerance(constant, values, self.tolerance):
                self.report.add("degenerate", f"output {name!r}: a constant would pass the tolerance")
                return
        if within_tolerance(other, truth, self.tolerance):
            self.report.add(
                "degenerate",
                f"output {name!r}: the outputs for other inputs pass as this one's "
                "(the output does not depend on the inputs)",
            )

    def _check_sensitivity(self, first: list, second: list, truth: list) -> None:
        for index, name in enumerate(self.problem.definition.inputs):
            if isinstance(self.workload.inputs[name], ScalarInput):
                continue
            if _equal(first[index], second[index]):
                self.report.add(
                    "sensitivity",
                    f"input {name!r} is the same in every input set, so its effect cannot be checked",
                    "warning",
                )
                continue
            mixed = list(first)
            mixed[index] = second[index]
            try:
                outputs = self.reference.run(mixed)
            except ReferenceFailure as error:
                self.report.add(
                    "sensitivity",
                    f"input {name!r}: not checked, the reference rejects one input "
                    f"set's {name} combined with another's other inputs ({error})",
                    "warning",
                )
                continue
            if all(within_tolerance(out, ref, self.tolerance) for out, ref in zip(outputs, truth)):
                self.report.add(
                    "sensitivity",
                    f"no output depends on input {name!r} (replacing it leaves every output within tolerance)",
                )


def _same_outputs(a: list, b: list) -> bool:
    return all(_equal(x, y) for x, y in zip(a, b))


def _equal(x, y) -> bool:
    """Exact equality for any dtype (packed fp4 and fp8 have no comparison kernels of their own)."""
    import torch

    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        return x == y
    if x.shape != y.shape:
        return False
    return bool(torch.equal(as_comparable(x).nan_to_num(nan=0.5), as_comparable(y).nan_to_num(nan=0.5)))


def _matched_ratio(candidate, truth, tolerance: Tolerance) -> float:
    """For the message of an output that failed `within_tolerance` (the evaluator's rule, evaluation/correctness.py)."""
    if tuple(candidate.shape) != tuple(truth.shape):
        return 0.0
    return measure_tolerance(as_comparable(candidate), as_comparable(truth), tolerance).matched_ratio


def _check_sol(problem: Problem, hardware: HardwareSpec, report: ProblemValidation) -> None:
    try:
        # One input draw: validate asks about coverage, and a suite has to validate in minutes.
        results = analyze_problem(problem, hardware, make_inputs=inputs_for_analysis, draws=1, explain=True)
    except SolbenchError as error:
        report.add("sol", f"T_SOL could not be derived: {error}")
        return
    except Exception as error:  # the analyzer runs the problem's code: report, do not crash the suite run
        report.add("sol", f"T_SOL could not be derived: {_described(error)}")
        return
    _check_golden_memory(problem, results, report)
    for result in results:
        report.t_sol_ms.append(result.t_sol_ms)
        if not result.coverage.full:
            missing = ", ".join(f"{u.op} ×{u.count}" for u in result.coverage.uncovered)
            report.add("sol", f"workload {result.workload.uuid}: coverage is not full (uncovered: {missing})")
            break
        if result.t_sol_ms <= 0:
            report.add("sol", f"workload {result.workload.uuid}: T_SOL is zero (no work seen)")
            break


def _check_golden_memory(problem: Problem, results, report: ProblemValidation) -> None:
    """GPU-tier workloads whose float64 golden run needs more than GOLDEN_MEMORY_LIMIT (a warning: the evaluator
    then falls back to a float32 golden result, or none, and says so in the trace)."""
    over = []
    for workload, result in zip(problem.workloads, results):
        if problem.tier_of(workload) != "gpu":
            continue
        copies, scores = golden_run_bytes(problem, workload, result.ops)
        if copies + scores > GOLDEN_MEMORY_LIMIT:
            over.append((copies + scores, workload, copies, scores))
    if over:
        needed, workload, copies, scores = max(over, key=lambda o: o[0])
        report.add(
            "golden_memory",
            f"{len(over)} GPU-tier workload(s) need more than "
            f"{GOLDEN_MEMORY_LIMIT / 1e9:g} GB for the float64 golden run, the largest {workload.uuid} "
            f"{dict(workload.axes)}: about {needed / 1e9:.0f} GB ({copies / 1e9:.1f} GB of float64 inputs and "
            f"outputs, {scores / 1e9:.1f} GB of attention scores and softmax); where it does not fit, the "
            "evaluator uses a float32 golden result or none (docs/evaluate.md)",
            severity="warning",
        )


def _described(error: Exception) -> str:
    last = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__}: {error} ({Path(last.filename).name}:{last.lineno})"


def validate_path(
    root: Path,
    hardware: HardwareSpec,
    *,
    workers: int = 1,
    progress: Callable[[ProblemValidation, int, int], None] | None = None,
    tier: str = "all",
) -> list[ProblemValidation]:
    """Every problem folder under ``root``, plus checks across problems (names used twice)."""
    folders = find_problem_folders(root)
    reports: list[ProblemValidation] = []
    if workers > 1 and len(folders) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {
                pool.submit(validate_problem, folder, hardware, tier): index for index, folder in enumerate(folders)
            }
            done: dict[int, ProblemValidation] = {}
            for future in as_completed(futures):
                done[futures[future]] = future.result()
                if progress:
                    progress(done[futures[future]], len(done), len(folders))
        reports = [done[i] for i in range(len(folders))]
    else:
        for folder in folders:
            reports.append(validate_problem(folder, hardware, tier))
            if progress:
                progress(reports[-1], len(reports), len(folders))
    _check_names_unique(reports)
    _check_duplicates(reports)
    return reports


def _check_duplicates(reports: list[ProblemValidation]) -> None:
    """Two problems computing the same outputs score one kernel twice (see `solbench.suite.duplicates`)."""
    from solbench.suite.duplicates import find_duplicates

    loaded, by_name = [], {}
    for report in reports:
        if report.name is None or report.name in by_name:
            continue
        try:
            loaded.append(load_problem(Path(report.path), device="cpu"))  # references run here: the CPU tier
        except SolbenchError:
            continue
        by_name[report.name] = report
    for duplicate in find_duplicates(loaded):
        first = by_name[duplicate.first]
        if duplicate.exact:
            by_name[duplicate.second].add(
                "suite",
                f"computes the same as {duplicate.first} ({first.path}): same "
                "inputs and outputs, the same results on the same inputs",
            )
        else:
            by_name[duplicate.second].add(
                "suite",
                f"near duplicate of {duplicate.first} ({first.path}): the same "
                "results once the inputs are cast to its dtypes",
                "warning",
            )


def _check_names_unique(reports: list[ProblemValidation]) -> None:
    first_at: dict[str, str] = {}
    for report in reports:
        if report.name is None:
            continue
        if report.name in first_at:
            report.add("suite", f"definition name {report.name!r} is also used by {first_at[report.name]}")
        first_at.setdefault(report.name, report.path)
