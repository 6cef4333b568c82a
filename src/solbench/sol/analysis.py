"""Speed-of-light analysis of a problem: per workload, the work, the compulsory bytes and T_SOL."""

from __future__ import annotations

import math
from collections import Counter
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from solbench.errors import SolbenchError
from solbench.hardware.spec import HardwareSpec
from solbench.sol.dynamo_deferral import dynamo_import_deferred
from solbench.sol.errors import AnalysisError, DataDependentOp, SliceOverBudget, ValuesNeeded
from solbench.sol.recorder import OpRecorder, Recording, arithmetic_intensity
from solbench.sol.roofline import roofline
from solbench.spec.dtypes import lookup_dtype, same_bits
from solbench.spec.problem import Problem
from solbench.spec.reference_code import import_reference, launches_triton
from solbench.spec.trace import PrecisionRecord
from solbench.spec.workload import ScalarInput, Workload
from solbench.torch_threads import at_most_threads

if TYPE_CHECKING:
    from solbench.sol.routed import RoutedTemplates


class InputFactory(Protocol):
    """Makes real inputs for a workload (given the reference module), for references that need values;
    each draw comes from its own fixed seed."""

    def __call__(self, problem: Problem, workload: Workload, reference_module: Any, *, draw: int = 0) -> list: ...


INPUT_DRAWS = 8
"""Input draws analysed when the work depends on input values (which experts tokens route to, ragged
lengths): the evaluator times inputs from a secret seed, so T_SOL is the least over these draws. The
chance that one more draw needs less than all 8 is 1/9, and then by no more than the spread between
draws; the timed loop also averages several input sets, which makes an average below the least of
8 rarer still."""


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="strings")


class UncoveredOp(_Result):
    op: str
    count: int
    reason: str


class OpRow(_Result):
    op: str
    shapes: str
    matrix_flops: float
    vector_flops: float
    special_ops: float
    bytes: int
    formula: str
    covered: bool


class RealSlice(_Result):
    """What the analysis ran for real to give value-dependent ops the values of shape-only tensors (sol/slices.py):
    the input draw whose slice held the most memory. Its own work, not the reference's: none of it is in the counts."""

    ops: dict[str, int]
    """Op -> times run (random factories: the inputs drawn)."""
    values_for: dict[str, int]
    """Value-dependent op -> times its arguments' values came from the slice."""
    flops: float
    peak_bytes: int


class Coverage(_Result):
    full: bool
    uncovered: list[UncoveredOp]
    execution: str
    """``fake`` (shapes only) or ``real (...)`` when the reference needed input values."""
    aten_calls: int | None = None
    """ATen calls the reference made (one input draw): what an analysis costs, so a slow one says why."""
    real_slice: RealSlice | None = None
    """Where a hybrid run recomputed routing values from a slice of the reference run for real."""


class WorkloadRef(_Result):
    uuid: str
    axes: dict[str, int]


class Published(_Result):
    """The published T_SOL beside solbench's (SOL-ExecBench's `sol_ms`, from the problem folder)."""

    sol_ms: float
    ratio: float | None
    """solbench's T_SOL / the published one (meaningful on the hardware it was published for)."""
    disagreement: str | None = None
    """For a ratio outside [0.5, 2]: which count differs, by rule (see docs/speed-of-light.md)."""


class WorkloadSol(_Result):
    workload: WorkloadRef
    hardware: str
    flops: float
    flops_by_class: dict[str, Any]
    """{"matrix": {precision: FLOPs}, "vector": {precision: FLOPs}, "special": ops}."""
    bytes: int
    """Compulsory traffic: every input read once (gathers: the rows touched), every output written once."""
    output_bytes: int = 0
    """The part of `bytes` that writes the outputs (whole, as the protocol materialises them)."""
    unfused_bytes: int
    """What the reference's ops move one by one."""
    arithmetic_intensity: float
    t_sol_ms: float
    t_compute_ms: dict[str, float]
    t_memory_ms: float
    bound: str
    coverage: Coverage
    ops: list[OpRow] | None = None
    published: Published | None = None
    precision: PrecisionRecord | None = None
    """The precision policy T_SOL followed and the rate fp32 matrix work was charged at (sol/precision.py)."""


@dynamo_import_deferred()
def analyze_problem(
    problem: Problem,
    hardware: HardwareSpec,
    *,
    explain: bool = False,
    make_inputs: InputFactory | None = None,
    draws: int = INPUT_DRAWS,
    precision: str = "auto",
) -> list[WorkloadSol]:
    """T_SOL of every workload; `draws` bounds the input draws analysed where the work depends on values.

    `precision` is the policy (sol/precision.py): ``strict`` charges fp32 matrix work at the fp32-accurate
    rate, ``tolerance`` at the lowest precision the workload's tolerance admits (checked by running the
    reference on small real inputs, cached), ``auto`` picks tolerance for problems imported from SOL-ExecBench."""
    from solbench.sol.precision import resolve_policy

    policy = resolve_policy(problem, precision)
    from solbench.sol.hybrid import cpu_reference_source

    definition = problem.definition.model_copy(update={"reference": cpu_reference_source(problem.definition.reference)})
    module, folder = import_reference(definition, "cpu")
    folders = [folder]
    try:
        recorded = _with_loop_shortcuts(definition, folders) or module
        plan = _cached_plan(problem, draws, loop_templates=not explain)
        if plan.loop_templates:
            from solbench.sol.routed import RoutedTemplates

            plan.templates = RoutedTemplates()  # this module's, for this call's runs only
        results = []
        for workload in problem.workloads:
            with nullcontext() if results else _plan_kept(problem, draws, plan):
                results.append(
                    analyze_workload(
                        problem,
                        workload,
                        hardware,
                        recorded,
                        explain=explain,
                        make_inputs=make_inputs,
                        draws=draws,
                        fallback_module=module,
                        plan=plan,
                    )
                )
        results = with_precision(problem, results, hardware, policy, module, make_inputs)
        return with_published(problem, results, hardware)
    finally:
        import shutil

        for each in folders:
            shutil.rmtree(each, ignore_errors=True)


def _cached_plan(problem: Problem, draws: int, loop_templates: bool) -> RecordingPlan:
    """Where an earlier process's analysis of this problem recorded its first workload (sol/plan_cache.py): the
    stages before it fail again for the same reason, torch._dynamo's import among their costs."""
    from solbench.sol.plan_cache import load_plan

    stored = load_plan(problem, draws, loop_templates)
    if stored is None or not META <= stored.stage <= REAL:
        return RecordingPlan(loop_templates=loop_templates)
    return RecordingPlan(stage=stored.stage, reason=stored.reason, loop_templates=loop_templates)


@contextmanager
def _plan_kept(problem: Problem, draws: int, plan: RecordingPlan):
    """Keeps the plan as the first workload left it, which starting there reproduces: each stage's reason is the
    one the stages before it gave. Also where the workload stopped with solbench's own error (a missing data file
    after fake tensors failed): the same stages fail the same way. Not where the first workload fell back to the
    plain reference (the stage is then the two modules' together, and the shortcut module might succeed where it
    had failed), nor at META (nothing to skip)."""
    from solbench.sol.plan_cache import FirstWorkloadPlan, store_plan

    def keep() -> None:
        if plan.stage > META and not plan.fell_back:
            store_plan(problem, draws, plan.loop_templates, FirstWorkloadPlan(stage=plan.stage, reason=plan.reason))

    try:
        yield
    except SolbenchError:
        keep()
        raise
    keep()


def _with_loop_shortcuts(definition, folders: list):
    """The reference imported with its repeating `range` loops recorded once per distinct iteration (sol/loops.py)
    and its loops sized by routing costed from templates (sol/routed.py), or None where no loop qualifies (or the
    reference launches Triton kernels, which run for real)."""
    from solbench.sol.loops import with_loop_shortcuts
    from solbench.sol.routed import with_routed_loops

    if launches_triton(definition.reference):
        return None
    shortcut = with_loop_shortcuts(definition.reference)
    source = with_routed_loops(shortcut or definition.reference) or shortcut
    if source is None:
        return None
    from solbench.spec.reference_code import ReferenceImportError

    try:
        module, folder = import_reference(definition.model_copy(update={"reference": source}), "cpu")
    except ReferenceImportError:
        return None  # the plain reference imported: record it as it is
    folders.append(folder)
    return module


def with_precision(
    problem: Problem,
    results: list[WorkloadSol],
    hardware: HardwareSpec,
    policy: str,
    module,
    make_inputs: InputFactory | None,
) -> list[WorkloadSol]:
    """Each result under the precision policy: strict keeps the fp32-accurate rate; tolerance charges fp32
    matrix work at the admissible precision's rate."""
    from solbench.sol.precision import strict_record
    from solbench.sol.problem_precision import problem_records

    if policy == "strict":
        return [r.model_copy(update={"precision": strict_record()}) for r in results]
    fp32_work = {r.workload.uuid: float(r.flops_by_class.get("matrix", {}).get("float32", 0.0)) for r in results}
    records = problem_records(problem, module, make_inputs, fp32_work)
    return [apply_precision(r, hardware, records[r.workload.uuid]) for r in results]


def apply_precision(result: WorkloadSol, hardware: HardwareSpec, record: PrecisionRecord) -> WorkloadSol:
    """`result` with its matrix time and T_SOL recomputed for fp32 matrix work at `record`'s precision."""
    from solbench.sol.precision import RATE_PRECISION
    from solbench.sol.roofline import matrix_seconds

    matrix_ms = (
        matrix_seconds(result.flops_by_class.get("matrix", {}), hardware, RATE_PRECISION[record.matrix_precision]) * 1e3
    )
    times = {"memory": result.t_memory_ms, **{**result.t_compute_ms, "matrix": matrix_ms}}
    bound = max(times, key=lambda roof: times[roof])
    return result.model_copy(
        update={
            "precision": record,
            "t_compute_ms": {**result.t_compute_ms, "matrix": matrix_ms},
            "t_sol_ms": times[bound],
            "bound": bound,
        }
    )


def with_published(
    problem: Problem, results: list[WorkloadSol], hardware: HardwareSpec, baselines=None
) -> list[WorkloadSol]:
    """Each result with the published figure beside it, where the folder (metadata.json) or `baselines` (a
    baselines file whose entries give `sol_ms`, see sol.published) carries one for this hardware."""
    from solbench.sol.published import disagreement, published_sol

    published = published_sol(problem, baselines, hardware.id)
    if not published:
        return results
    updated = []
    for result in results:
        value = published.get(result.workload.uuid)
        if value is None:
            updated.append(result)
            continue
        ratio = result.t_sol_ms / value if value > 0 else None
        updated.append(
            result.model_copy(
                update={
                    "published": Published(
                        sol_ms=value, ratio=ratio, disagreement=disagreement(result, value, hardware)
                    )
                }
            )
        )
    return updated


def analyze_workload(
    problem: Problem,
    workload: Workload,
    hardware: HardwareSpec,
    module,
    *,
    explain: bool = False,
    make_inputs: InputFactory | None = None,
    draws: int = INPUT_DRAWS,
    fallback_module=None,
    plan: RecordingPlan | None = None,
) -> WorkloadSol:
    """`fallback_module`: the plain reference, where `module` is one with loop shortcuts (sol/loops.py); it runs
    when a shortcut loop's last iteration does not repeat the probed one. `plan`: shared by a problem's workloads,
    so that each starts recording where the one before succeeded."""
    from solbench.sol.loops import LoopShortcutMismatch

    plan = plan if plan is not None else RecordingPlan(loop_templates=not explain)
    try:
        recordings, execution, real_slice = _record(problem, workload, module, make_inputs, draws, plan)
    except (LoopShortcutMismatch, Exception) as failure:
        # the rewritten module's own failures (line numbers of the rewritten source) are the plain reference's to
        # report: it runs again, and only its error reaches the user
        if fallback_module is None or fallback_module is module:
            if isinstance(failure, LoopShortcutMismatch):
                raise AnalysisError(
                    f"{problem.name}, workload {workload.uuid}: a loop shortcut failed ({failure}) "
                    "and no plain reference module was given"
                ) from None
            raise
        plan.fell_back = True
        recordings, execution, real_slice = _record(problem, workload, fallback_module, make_inputs, draws, plan)
    # each recording's total once: a loop recorded thousands of times makes a long list to add up
    totals = [(*r.totals(), r) for r in recordings]
    cost, needed, recording = (
        min(totals, key=lambda t: roofline(t[0], t[1], hardware).t_sol_s) if len(totals) > 1 else totals[0]
    )
    roof = roofline(cost, needed, hardware)
    uncovered = Counter(op.name for op in recording.ops if not op.covered)
    coverage = Coverage(
        full=not uncovered and not recording.opaque_outputs,
        execution=execution,
        aten_calls=len(recording.ops),
        real_slice=real_slice,
        uncovered=[
            UncoveredOp(op=name, count=count, reason="no cost rule: bounded by memory only")
            for name, count in sorted(uncovered.items())
        ]
        + [UncoveredOp(op="<custom kernel>", count=1, reason=reason) for reason in recording.opaque_outputs],
    )
    rows = (
        [
            OpRow(
                op=op.name,
                shapes=op.shapes,
                matrix_flops=sum(op.cost.matrix_flops.values()),
                vector_flops=sum(op.cost.vector_flops.values()),
                special_ops=op.cost.special_ops,
                bytes=op.cost.bytes_read + op.cost.bytes_written,
                formula=op.cost.formula,
                covered=op.covered,
            )
            for op in recording.ops
            if op.cost.flops or op.cost.special_ops or not op.covered
        ]
        if explain
        else None
    )
    return WorkloadSol(
        workload=WorkloadRef(uuid=workload.uuid, axes=dict(workload.axes)),
        hardware=hardware.id,
        flops=cost.flops,
        flops_by_class={"matrix": cost.matrix_flops, "vector": cost.vector_flops, "special": cost.special_ops},
        bytes=needed,
        output_bytes=recording.output_bytes,
        unfused_bytes=cost.bytes_read + cost.bytes_written,
        arithmetic_intensity=arithmetic_intensity(cost.flops, needed),
        t_sol_ms=roof.t_sol_s * 1e3,
        t_compute_ms={"matrix": roof.matrix_s * 1e3, "vector": roof.vector_s * 1e3, "special": roof.special_s * 1e3},
        t_memory_ms=roof.memory_s * 1e3,
        bound=roof.bound,
        coverage=coverage,
        ops=rows,
    )


REAL_RUN_BUDGET_BYTES = 256 << 20
"""Largest real input set the analysis runs the reference on when even hybrid values are not enough
(routing decided by floating-point logits): beyond it the problem is reported as not analysable
rather than left to run GPU-sized work on the CPU for minutes."""


META, FAKE, HYBRID_SMALL_FLOATS, HYBRID, REAL = range(5)
"""The ways to record a workload, cheapest first: meta tensors; fake tensors; hybrid inputs with floating-point
inputs up to REAL_INPUT_LIMIT elements real; up to REAL_LIMIT; real inputs."""


@dataclass
class RecordingPlan:
    """Where the next workload of one problem starts recording. The ways an earlier workload's recording failed
    (a branch on a value, a data-dependent op, routing steered by floating-point inputs) fail again on the next
    workload, as the same code does the same thing: they are skipped, and their reason carried over. Each later
    way is at least as informed as the one it replaces, so where a skipped way would have worked after all (a
    branch on a shape), the result still holds; it is only the more expensive one to get."""

    stage: int = META
    reason: str = ""
    """Why the ways before `stage` failed, as `execution` reports it."""
    loop_templates: bool = True
    """Whether routed loops may cost iterations from templates (sol/routed.py): not for `--explain`, whose per-op
    formulas are each rule's own."""
    fell_back: bool = False
    """Whether a workload's recording failed with the loop-shortcut module and ran the plain reference."""
    templates: RoutedTemplates | None = None
    """The templates routed loops learned in the workloads and draws before (a `RoutedTemplates`, sol/routed.py), or
    None: each run learns its own. Only for the runs of the one module it was made with, and where `loop_templates`."""
    costs: dict = field(default_factory=dict)
    """Signature -> cost of the ops recorded in the hybrid runs before (`OpRecorder._cost`: a cost rule other than a
    matrix one reads nothing but the signature, so one run's costs hold for every other): a routing loop's `select`
    of each expert and `nonzero` of each routed count repeat from draw to draw and workload to workload."""

    def failed(self, next_stage: int, reason: str) -> None:
        self.stage, self.reason = next_stage, reason


def _record(
    problem: Problem, workload: Workload, module, make_inputs: InputFactory | None, draws: int, plan: RecordingPlan
) -> tuple[list[Recording], str, RealSlice | None]:
    """Run the reference on fake tensors; where it needs values, on hybrid inputs from `make_inputs`
    (fake floating-point tensors, real small integer ones), `draws` draws of them (one when the
    inputs are fixed data, two when the first two give the same T_SOL); where even that is not
    enough, on real inputs if they are small. `plan` starts where an earlier workload's recording succeeded."""
    if launches_triton(problem.definition.reference):
        reason = "the reference launches Triton kernels, which need real memory"
        return _record_real(problem, workload, module, make_inputs, draws, reason)
    reason = plan.reason
    if plan.stage < REAL:
        # what runs for real below is small (index and routing tensors): on one intra-op thread, as OpenMP's fork
        # and join cost more than such an op (a routing loop's nonzero on a strided mask: 7x the CPU time at two)
        with at_most_threads(1):
            try:
                return _record_without_real_floats(problem, workload, module, make_inputs, draws, plan)
            except SliceOverBudget as error:
                reason = str(error)  # this workload's slice is too large; a smaller workload's may fit
            except ValuesNeeded as error:
                plan.failed(REAL, str(error))
                reason = plan.reason
    return _record_real(problem, workload, module, make_inputs, draws, reason)


def _record_without_real_floats(
    problem: Problem, workload: Workload, module, make_inputs: InputFactory | None, draws: int, plan: RecordingPlan
) -> tuple[list[Recording], str, RealSlice | None]:
    """Shapes only (meta, then fake tensors), then hybrid values, then hybrid values with slices run for real where
    shape-only floating-point values steer the work; `ValuesNeeded` (its message the reason) where even that fails,
    `SliceOverBudget` where the slice is too large."""
    if plan.stage == META:
        try:
            return [_run_recorded_meta(problem, workload, module, plan)], "fake", None
        except DataDependentOp as error:  # which fake tensors refuse too: values next
            plan.failed(HYBRID_SMALL_FLOATS, str(error))
        except Exception:  # an op without a meta kernel (fake tensors fall back to the CPU's): fake tensors next
            plan.failed(FAKE, "")
    if plan.stage == FAKE:
        try:
            return [_run_recorded_fake(problem, workload, module)], "fake", None
        except Exception as error:  # data-dependent ops: retry with the values that steer the work
            plan.failed(HYBRID_SMALL_FLOATS, _reason(error))
    if make_inputs is None:
        raise AnalysisError(
            f"{problem.name}: the reference needs real input values ({plan.reason}) and no input generator was given"
        )
    from solbench.sol.hybrid import REAL_INPUT_LIMIT, REAL_LIMIT

    if plan.stage == HYBRID_SMALL_FLOATS:
        try:  # floating-point inputs above REAL_INPUT_LIMIT shape-only: seconds saved where values steer nothing
            return _record_hybrid(problem, workload, module, make_inputs, draws, plan, REAL_INPUT_LIMIT)
        except ValuesNeeded:
            plan.failed(HYBRID, plan.reason)
    try:  # values do steer the work (routing from logits or from hidden states): keep inputs to REAL_LIMIT real, and
        # recompute the values of larger ones where they are needed, from the slice of the program that makes them
        return _record_hybrid(problem, workload, module, make_inputs, draws, plan, REAL_LIMIT, slices=True)
    except ValuesNeeded as error:
        raise type(error)(f"{plan.reason}; then {error}") from None


def _reason(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"


def _record_hybrid(
    problem: Problem,
    workload: Workload,
    module,
    make_inputs: InputFactory,
    draws: int,
    plan: RecordingPlan,
    input_limit: int,
    slices: bool = False,
) -> tuple[list[Recording], str, RealSlice | None]:
    """`input_limit`: the most elements a floating-point input keeps its values with (larger ones are shape-only).
    `slices`: values a value-dependent op needs of a shape-only tensor are recomputed (sol/slices.py)."""
    recordings, execution, costs = _record_hybrid_draws(
        problem, workload, module, make_inputs, draws, plan, input_limit, slices
    )
    ran = [cost for cost in costs if cost.ops]
    if not ran:
        return recordings, execution, None
    largest = max(ran, key=lambda cost: cost.peak_bytes)
    real_slice = RealSlice(
        ops=dict(largest.ops), values_for=dict(largest.values_for), flops=largest.flops, peak_bytes=largest.peak_bytes
    )
    return recordings, f"{execution}; {largest.describe()} (the largest of {len(ran)} draw(s))", real_slice


def _record_hybrid_draws(
    problem: Problem,
    workload: Workload,
    module,
    make_inputs: InputFactory,
    draws: int,
    plan: RecordingPlan,
    input_limit: int,
    slices: bool,
) -> tuple[list[Recording], str, list]:
    from solbench.sol.hybrid import cuda_not_initialised, hybrid_values

    reason = plan.reason
    recordings: list[Recording] = []
    costs = []
    first_inputs = None
    for draw in range(draws):
        with hybrid_values(float_factory_limit=input_limit, slices=slices) as mode:
            inputs = _make_inputs(make_inputs, problem, workload, module, draw)
            inputs = [mode.fake(v) if _is_large_real(v, input_limit) else v for v in inputs]
        with cuda_not_initialised():
            try:
                # no routed-loop templates where slices run: a template skips ops whose results a slice may need
                templates = plan.loop_templates and not slices
                recording = _run_recorded(
                    module,
                    inputs,
                    values=mode,
                    loop_templates=templates,
                    templates=plan.templates if templates else None,
                    costs=plan.costs,
                )
            except ValuesNeeded:
                raise
            except Exception as error:
                if not slices:  # values read where no ATen op sees it (`tolist()` of a shape-only tensor): slices next
                    raise ValuesNeeded(f"the reference failed on shape-only values: {_reason(error)}") from None
                raise AnalysisError(
                    f"{problem.name}, workload {workload.uuid}: the reference failed on hybrid "
                    f"inputs (fake floating-point tensors, real small ones): {_reason(error)}"
                ) from None
        recordings.append(recording)
        if mode.slices is not None:
            mode.slices.release()  # the next draw's slices have the memory budget to themselves
            costs.append(mode.slices.cost)
        drawn = any(cost.ops for cost in costs)  # values drawn by slices differ from draw to draw
        if mode.assumed and "taken as nonzero" not in reason:
            reason += (
                f"; {len(mode.assumed)} branch(es) on floating-point scalars without values taken as nonzero / false"
            )
        if draw == 0:
            first_inputs = inputs
            if all(not _is_real(v) for v in inputs) and not drawn:
                return recordings, f"hybrid ({reason}); inputs without values", costs
        elif draw == 1:
            assert first_inputs is not None  # set on draw 0
            if all(_same_real(a, b) for a, b in zip(first_inputs, inputs)) and not drawn:
                return recordings[:1], f"hybrid ({reason})", costs  # fixed data: every draw is the same
            if _same_work(recordings[0], recordings[1]):
                return recordings, f"hybrid ({reason}); 2 input draws, the same work", costs
    if draws == 1:
        return recordings, f"hybrid ({reason}); one input draw", costs
    return recordings, f"hybrid ({reason}); least of {draws} input draws", costs


def _is_real(value) -> bool:
    import torch
    from torch._subclasses.fake_tensor import is_fake

    return isinstance(value, torch.Tensor) and not is_fake(value) and not value.is_meta


def _is_large_real(value, limit: int) -> bool:
    return _is_real(value) and value.dtype.is_floating_point and value.numel() > limit


def _same_real(a, b) -> bool:
    if _is_real(a) and _is_real(b):
        return same_bits(a, b)
    return not _is_real(a) and not _is_real(b)


def _same_work(first: Recording, second: Recording) -> bool:
    """Two draws with the same FLOPs per class and the same compulsory bytes: the values do not change the work."""
    (a, a_bytes), (b, b_bytes) = first.totals(), second.totals()
    return (a.matrix_flops, a.vector_flops, a.special_ops) == (
        b.matrix_flops,
        b.vector_flops,
        b.special_ops,
    ) and a_bytes == b_bytes


def _record_real(
    problem: Problem, workload: Workload, module, make_inputs: InputFactory | None, draws: int, reason: str
) -> tuple[list[Recording], str, RealSlice | None]:
    if make_inputs is None:
        raise AnalysisError(
            f"{problem.name}: the reference needs real input values ({reason}) and no input generator was given"
        )
    size = _input_bytes(problem, workload)
    if size > REAL_RUN_BUDGET_BYTES:
        raise AnalysisError(
            f"{problem.name}, workload {workload.uuid}: cannot be analysed without running its "
            f"floating-point work ({reason}); its inputs hold {size / 2**30:.1f} GiB, above the "
            f"{REAL_RUN_BUDGET_BYTES >> 20} MiB the analysis runs for real on the CPU"
        )
    inputs = _make_inputs(make_inputs, problem, workload, module, 0)
    recordings = [_run_recorded_real(problem, workload, module, inputs)]
    for draw in range(1, draws):
        more = _make_inputs(make_inputs, problem, workload, module, draw)
        if draw == 1 and all(same_bits(a, b) for a, b in zip(inputs, more)):
            return recordings, f"real ({reason})", None  # fixed data (safetensors, scalars): every draw is the same
        recordings.append(_run_recorded_real(problem, workload, module, more))
        if draw == 1 and _same_work(recordings[0], recordings[1]):
            return recordings, f"real ({reason}); 2 input draws, the same work", None
    if draws == 1:
        return recordings, f"real ({reason}); one input draw", None
    return recordings, f"real ({reason}); least of {draws} input draws", None


def _input_bytes(problem: Problem, workload: Workload) -> int:
    axes = problem.axes_of(workload)
    total = 0
    for tensor in problem.definition.inputs.values():
        shape = problem.definition.shape_of(tensor, axes)
        if shape is not None:
            dtype = lookup_dtype(tensor.dtype)
            total += math.prod(shape) * max(dtype.bits // 8, 1)
    return total


def _make_inputs(make_inputs: InputFactory, problem: Problem, workload: Workload, module, draw: int) -> list:
    try:
        return make_inputs(problem, workload, module, draw=draw)
    except SolbenchError:
        raise
    except Exception as error:
        raise AnalysisError(
            f"{problem.name}, workload {workload.uuid}: making real inputs failed: {type(error).__name__}: {error}"
        ) from None


def _run_recorded_real(problem: Problem, workload: Workload, module, inputs: list) -> Recording:
    try:
        return _run_recorded(module, inputs)
    except Exception as error:
        raise AnalysisError(
            f"{problem.name}, workload {workload.uuid}: the reference failed on real inputs: "
            f"{type(error).__name__}: {error}"
        ) from None


def _run_recorded_fake(problem: Problem, workload: Workload, module) -> Recording:
    """Shapes only. Torch logs and warns about ops that cannot run on fake tensors; the fallback handles them."""
    import logging
    import warnings

    from torch._subclasses.fake_tensor import FakeTensorMode

    fake_logger = logging.getLogger("torch._subclasses.fake_tensor")
    level = fake_logger.level
    fake_logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), FakeTensorMode():
            warnings.simplefilter("ignore")
            return _run_recorded(module, _fake_inputs(problem, workload))
    finally:
        fake_logger.setLevel(level)


def _run_recorded_meta(problem: Problem, workload: Workload, module, plan: RecordingPlan) -> Recording:
    """Shapes only, on meta tensors: for references that loop over thousands of time steps, a fake tensor's
    millisecond per op adds up to minutes. Scaled-dot-product attention runs the kernel the CPU would pick
    (sol/composites.py), as on fake tensors."""
    import warnings

    from solbench.sol.hybrid import HybridMode, cuda_not_initialised

    mode = HybridMode(shape_only=True)
    with warnings.catch_warnings(), cuda_not_initialised():
        warnings.simplefilter("ignore")
        recording = _run_recorded(
            module,
            _fake_inputs(problem, workload, device="meta"),
            values=mode,
            loop_templates=plan.loop_templates,
            templates=plan.templates,  # set only where loop_templates
        )
    if mode.assumed:  # the mode raised at the branch, and the reference caught that
        raise ValuesNeeded("a branch on a value")
    return recording


def _run_recorded(
    module,
    inputs: list,
    values=None,
    loop_templates: bool = True,
    templates: RoutedTemplates | None = None,
    costs: dict | None = None,
) -> Recording:
    """Run the reference under a recorder; `values` (a HybridMode) decides each op's result where the inputs
    are shape-only or hybrid, else the ops run on the inputs as they are (real or fake tensors). `loop_templates`:
    routed loops may cost iterations from templates (sol/routed.py), kept in `templates` (a `RoutedTemplates`)
    from the runs before where given. `costs`: op costs by signature, shared with other runs (see `RecordingPlan`)."""
    with _no_cycle_collection():  # resumed once the recorder is dropped: a collection then walks only what is kept
        return _recorded_run(module, inputs, values, loop_templates, templates, costs)


def _recorded_run(
    module, inputs: list, values, loop_templates: bool, templates: RoutedTemplates | None, costs: dict | None
) -> Recording:
    import torch

    from solbench.sol.composites import FusedAttention
    from solbench.sol.hybrid import SliceValueReads

    recorder = OpRecorder(inputs, values=values, loop_templates=loop_templates, routed_templates=templates, costs=costs)
    reads = SliceValueReads(values) if values is not None and values.slices is not None else nullcontext()
    with torch.no_grad(), recorder, FusedAttention(recorder), reads:
        returned = module.run(*inputs)
    outputs = (
        list(returned.values())
        if isinstance(returned, dict)
        else list(returned)
        if isinstance(returned, (tuple, list))
        else [returned]
    )
    return recorder.finish([o for o in outputs if isinstance(o, torch.Tensor)])


@contextmanager
def _no_cycle_collection():
    """Python's cycle collector paused while a reference runs under the recorder. The recorder keeps every
    tensor and op it saw alive (tens of thousands for a reference that loops in Python), and each
    collection walks them all again: a third of the analysis time in such references. Reference counting
    still frees what the run drops; the collector resumes afterwards."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _fake_inputs(problem: Problem, workload: Workload, device: str | None = None) -> list:
    """Inputs with the workload's shapes and dtypes and no data (created inside a FakeTensorMode)."""
    import torch

    axes = problem.axes_of(workload)
    values = []
    for name, tensor in problem.definition.inputs.items():
        descriptor = workload.inputs[name]
        dtype = lookup_dtype(tensor.dtype)
        shape = problem.definition.shape_of(tensor, axes)  # None exactly when the input is a scalar
        if shape is None:
            values.append(
                descriptor.value if isinstance(descriptor, ScalarInput) else (1.0 if dtype.is_floating else 1)
            )
        else:
            values.append(torch.empty(shape, dtype=dtype.torch_dtype(), device=device))
    return values
