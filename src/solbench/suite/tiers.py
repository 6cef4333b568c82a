"""Deriving a problem's CPU tier: a handful of small workloads from its published (GPU-scale) ones.

Published SOL-ExecBench workloads are sized for a B200 (the median problem's largest moves about
400 MB); a 2-core CPU (about 22 GB/s, 100 GFLOP/s fp32) would take seconds to minutes per reference
run. `write_cpu_tier` writes ``workload.cpu.jsonl`` beside ``workload.jsonl`` (which stays as
published): each published workload with its `var` axes halved, largest first, until it fits the
budget, never below the smallest value the problem publishes for that axis and keeping the axis's
granularity (the gcd of its published values: token counts in multiples of 128 stay so). Constants
are kept, so a problem whose constant weights alone exceed the budget gets its smallest workloads.

The budget is checked with a size-based estimate first (bytes of every input and output, from the
definition's shapes: exact and free), then with the analyzer's per-workload FLOPs and bytes
(`sol.analyze_problem`, shape-only, no real work) where the reference analyses. Inputs stay
consistent: random and custom inputs follow the axes by construction; an integer scalar that equals
the same axis in every published workload (``seq_length_scalar``) follows that axis; a workload whose
inputs are safetensors files cannot be scaled, so such a problem gets no CPU tier (the reason says
which file).
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from solbench.errors import SolbenchError
from solbench.spec.definition import ConstAxis, Definition
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.expressions import evaluate, names_in
from solbench.spec.generator_constants import BoundConstant, bound_constants
from solbench.spec.problem import Problem, find_problem_folders, load_problem
from solbench.spec.tiers import CPU_TIER_MAX_BYTES, CPU_WORKLOAD_FILE
from solbench.spec.workload import SafetensorsInput, ScalarInput, Workload
from solbench.suite.axis_relations import AxisRelations
from solbench.suite.tier_check import WorkloadCheck, check_workloads, real_run_disagreement

DEFAULT_MAX_BYTES = CPU_TIER_MAX_BYTES
"""Bytes of inputs and outputs per CPU workload (size-based): about 1.5 ms of traffic at 22 GB/s, so a
reference touching its data a few dozen times stays well under a second."""
DEFAULT_MAX_FLOPS = 2_000_000_000
"""FLOPs per CPU workload (the analyzer's count): 20 ms at 100 GFLOP/s fp32; low-precision matrix products
run far slower on a CPU, which this margin absorbs."""
MAX_FLOOR_BYTES = 1_000_000_000
"""A problem whose tensors at the smallest published axis values (its constant-sized weights, caches) exceed this
gets no CPU tier: the evaluator holds inputs, outputs and float64 golden copies at once (a 2.1 GB bf16 KV cache
took a 24 GB machine past 12 GB)."""
MAX_WORKLOADS = 8
MIN_WORKLOADS = 4
ANALYSIS_HARDWARE = "B200_1500MHz"
"""Any database entry serves: only the FLOP and byte counts of the analysis are used, not its times."""
_UUID_NAMESPACE = uuid.UUID("5d0f8a52-4c55-4d3e-9a62-1f3b1a2c7e10")


class CpuTierSkipped(SolbenchError):
    """The problem's workloads cannot be scaled down (safetensors inputs); the message says which file."""


@dataclass
class CpuTierResult:
    """What `write_cpu_tier` did for one problem folder."""

    folder: Path
    action: str
    """``written``, ``not needed`` (the published workloads already fit) or ``skipped`` (cannot be scaled)."""
    path: Path | None = None
    workloads: list[Workload] = field(default_factory=list)
    reason: str = ""
    cost: str = "size-based bytes"
    """What the budget was checked with: ``size-based bytes`` alone, or also ``analyzer FLOPs``."""
    adjusted: str = ""
    """Where the reference disagreed with the definition on derived workloads: which, how (the output and both
    shapes), and what was derived again or dropped. Empty where every derived workload held."""


def workload_bytes(problem: Problem, workload: Workload | dict[str, int]) -> int:
    """Bytes of every input and output tensor at this workload's axes (the size-based estimate)."""
    return problem.tensor_bytes(dict(workload.axes if isinstance(workload, Workload) else workload))


def write_cpu_tier(
    folder: Path | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_flops: float = DEFAULT_MAX_FLOPS,
    analyze: bool = True,
) -> Path | None:
    """Write ``workload.cpu.jsonl`` for the problem in `folder`; its path, or None when the problem needs none
    (its published workloads fit) or cannot have one (safetensors inputs: `derive_cpu_tier` says why)."""
    return derive_cpu_tier(folder, max_bytes=max_bytes, max_flops=max_flops, analyze=analyze, write=True).path


def write_cpu_tiers(
    root: Path | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_flops: float = DEFAULT_MAX_FLOPS,
    analyze: bool = True,
    progress=None,
) -> list[CpuTierResult]:
    """`derive_cpu_tier(write=True)` for every problem folder under `root`; a folder that fails to load is
    reported as skipped with the error, the others go on."""
    results = []
    for folder in find_problem_folders(root):
        try:
            result = derive_cpu_tier(folder, max_bytes=max_bytes, max_flops=max_flops, analyze=analyze, write=True)
        except SolbenchError as error:
            result = CpuTierResult(Path(folder), "skipped", reason=str(error))
        results.append(result)
        if progress:
            progress(result)
    return results


def derive_cpu_tier(
    folder: Path | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_flops: float = DEFAULT_MAX_FLOPS,
    analyze: bool = True,
    write: bool = False,
) -> CpuTierResult:
    """The CPU-tier workloads for a problem (written to ``workload.cpu.jsonl`` when `write`; with `write`, a CPU
    tier left from earlier is removed where none is derived now, so the folder never keeps a stale one)."""
    folder = Path(folder)
    result = _derive(folder, max_bytes, max_flops, analyze)
    path = folder / CPU_WORKLOAD_FILE
    if write and result.action == "written":
        result.path = path
        lines = [json.dumps(w.model_dump(mode="json", exclude_none=True)) for w in result.workloads]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif write and path.exists():
        path.unlink()
    return result


def _derive(folder: Path, max_bytes: int, max_flops: float, analyze: bool) -> CpuTierResult:
    problem = load_problem(folder, "gpu")
    try:
        _check_scalable(problem)
    except CpuTierSkipped as error:
        return CpuTierResult(folder, "skipped", reason=str(error))
    deriver = _Deriver(problem, max_bytes, max_flops, analyze)
    if deriver.floor_bytes > MAX_FLOOR_BYTES:
        return CpuTierResult(
            folder,
            "skipped",
            reason=(
                f"its tensors take {deriver.floor_bytes / 1e9:.1f} GB even at the smallest published axis values "
                f"{deriver.floor} (constant axes: {_largest_tensor(problem, deriver.floor)}); no const axis could be "
                f"sized down far enough (see shrunk_constants), and more than {MAX_FLOOR_BYTES / 1e9:g} GB does not "
                "evaluate on a CPU"
            ),
        )
    if deriver.published_fit():
        return CpuTierResult(
            folder,
            "not needed",
            reason=f"every published workload fits ({deriver.budget_text()})",
            cost=deriver.cost_name,
        )
    workloads = deriver.derive()
    checked = ""
    bound = {c.axis for c in bound_constants(problem.definition)}
    target = max_bytes // CONST_TARGET_DIVISOR
    while bound & set(deriver.overrides):
        # The generator's own constants follow the override: what else it assumes of them (cache positions below
        # the cache length, which no constraint declares) only a run of the reference on each workload shows.
        failure = real_run_disagreement(problem, workloads)
        if failure is None:
            checked = "; the reference ran on each with its generator's constants bound to the overrides"
            break
        if target * 2 > MAX_FLOOR_BYTES:
            return CpuTierResult(
                folder,
                "skipped",
                reason=(
                    f"with its const axes sized down ({deriver.overrides}) the reference fails: {failure}; and larger "
                    f"constants exceed {MAX_FLOOR_BYTES / 1e9:g} GB"
                ),
            )
        target *= 2
        deriver = _Deriver(problem, max_bytes, max_flops, analyze, const_target=target)
        workloads = deriver.derive()
    adjusted = ""
    if not checked:  # each has run for real above where it had to; else the check below
        try:
            held = _held(problem, deriver, workloads)
        except CpuTierSkipped as error:
            return CpuTierResult(folder, "skipped", reason=str(error))
        deriver, workloads, adjusted, checked = held.deriver, held.workloads, held.adjusted, held.checked
    return CpuTierResult(
        folder,
        "written",
        workloads=workloads,
        cost=deriver.cost_name,
        reason=f"{len(workloads)} workloads from {len(problem.workloads)} published "
        f"({deriver.budget_text()}){deriver.note()}{'; ' + adjusted if adjusted else ''}{checked}",
        adjusted=adjusted,
    )


@dataclass(frozen=True)
class _Held:
    """The derived workloads that hold, the deriver that made them, and what the check did."""

    deriver: _Deriver
    workloads: list[Workload]
    adjusted: str
    """What was re-derived or dropped, and why (empty: nothing)."""
    checked: str
    """How the reference ran on them, for the reason (``; ...``)."""


def _held(problem: Problem, deriver: _Deriver, workloads: list[Workload]) -> _Held:
    """The derived workloads on which the reference's outputs have the definition's shapes.

    Where some disagree, the tier is derived again keeping every relation the published workloads keep between
    their var axes (suite/axis_relations.py), and those that still disagree are dropped. Raises CpuTierSkipped
    where none holds."""
    relations = AxisRelations.published(problem)
    verdicts = _verdicts(problem, workloads, relations)
    failed = [v for v in verdicts if v.disagreement]
    if not failed:
        return _Held(deriver, workloads, "", _check_note(verdicts))
    what = (
        f"the reference disagreed with the definition on {len(failed)} of {len(workloads)} derived workload(s) "
        f"({_failures(verdicts)})"
    )
    if not relations.at_most and not relations.ratios:
        return _without(deriver, verdicts, what)
    kept = _Deriver(
        problem, deriver.max_bytes, deriver.max_flops, deriver.analyze, deriver.const_target, relations=relations
    )
    again = _verdicts(problem, kept.derive(), relations)
    what += f"; derived again keeping the published workloads' relations of the axes ({relations.describe()})"
    if any(not v.disagreement for v in again):
        return _without(kept, again, what, name_dropped=True)
    return _without(deriver, verdicts, what + f", on which it disagreed too ({_failures(again)})")


def _without(deriver: _Deriver, verdicts: list[WorkloadCheck], adjusted: str, *, name_dropped: bool = False) -> _Held:
    """The workloads of `verdicts` that hold; CpuTierSkipped where none does. `name_dropped`: `adjusted` does not
    yet say why those dropped disagree."""
    held = [v.workload for v in verdicts if not v.disagreement]
    if not held:
        raise CpuTierSkipped(f"no derived workload holds: {adjusted}")
    dropped = len(verdicts) - len(held)
    if dropped:
        adjusted += f"; {dropped} dropped" + (f" ({_failures(verdicts)})" if name_dropped else "")
    return _Held(deriver, held, adjusted, _check_note(verdicts))


def _failures(verdicts: list[WorkloadCheck]) -> str:
    failed = [v for v in verdicts if v.disagreement]
    return failed[0].describe() + (f", and {len(failed) - 1} more" if len(failed) > 1 else "") if failed else "none"


def _verdicts(problem: Problem, workloads: list[Workload], relations: AxisRelations) -> list[WorkloadCheck]:
    """Each workload checked by running the reference on it (suite/tier_check.py). Where the reference needs input
    values, only a workload breaking a relation of the published workloads runs for real: that is how a shrink
    breaks a reference, and a real run there costs seconds to a minute (NVFP4 weights quantised by the
    generator)."""
    return check_workloads(problem, workloads, lambda w: bool(relations.broken(dict(w.axes))))


def _check_note(verdicts: list[WorkloadCheck]) -> str:
    """How the reference was run on the workloads kept."""
    counts = {how: sum(v.how == how and not v.disagreement for v in verdicts) for how in ("shape-only", "real run")}
    runs = [f"{counts['shape-only']} shape-only"] if counts["shape-only"] else []
    runs += [f"{counts['real run']} by a real run"] if counts["real run"] else []
    text = f"; the reference's output shapes checked: {' and '.join(runs)}" if runs else ""
    not_run = [v for v in verdicts if v.how == "not run"]
    if not_run:
        text += (
            f"; {len(not_run)} not checked (the reference needs input values: {not_run[0].values_needed}; a real "
            "run is made where a workload breaks a relation the published workloads' axes keep, which these keep)"
        )
    return text


def _largest_tensor(problem: Problem, axes: dict[str, int]) -> str:
    resolved = problem.definition.resolve_axes(axes, const_overrides=True)
    sizes = []
    for name, tensor in (*problem.definition.inputs.items(), *problem.definition.outputs.items()):
        shape = problem.definition.shape_of(tensor, resolved)
        if shape is not None:
            sizes.append((math.prod(shape) * lookup_dtype(tensor.dtype).bits // 8, name, shape))
    size, name, shape = max(sizes)
    return f"the largest, {name}, is {'x'.join(map(str, shape))} ({size / 1e9:.1f} GB)"


CONST_TARGET_DIVISOR = 8
"""Const axes shrink until the tensors at the smallest var axes take an eighth of the byte budget (4 MB): the
work of such problems scales with the constants (each token times every weight it is routed to), their FLOPs
cannot be counted without the generator's routing, and bf16 matrix products on a CPU run at a fraction of a
GFLOP/s (L1/044 at 32 MB of weights: 13 CPU s per reference run; at 4 MB, well under a second)."""
CONST_STEP = 16
"""A const axis sized down keeps this granularity (or its own, where smaller): NVFP4 blocks of 16 values,
tensor-core tiles, head dimensions in multiples of 16 stay whole."""


def shrunk_constants(problem: Problem, axes: dict[str, int], target_bytes: int) -> dict[str, int]:
    """Const axes halved until the tensors at `axes` (the smallest var-axis values) take at most `target_bytes`:
    const axis -> its CPU-tier size. Each step halves the axis that saves the most bytes. An axis is left alone
    where its value is written in the reference as a literal (the code would then assume it), where halving breaks
    its granularity (`CONST_STEP`) or a constraint, or where it is only a count the others are checked against
    (below 2 x the largest other const it is compared with is not known: the caller verifies by running the
    reference where a generator constant is bound, `tier_check.real_run_disagreement`). Empty when nothing shrinks."""
    definition = problem.definition
    literals = _int_literals(definition.reference, skip=bound_constants(definition))
    candidates = {
        name: axis.value
        for name, axis in definition.axes.items()  # const axis -> its declared size
        if isinstance(axis, ConstAxis)
        and axis.value >= 2
        and axis.value not in literals
        and _in_a_shape(definition, name)
    }
    overrides: dict[str, int] = {}
    while workload_bytes(problem, {**axes, **overrides}) > target_bytes:
        options = []
        for name, declared in candidates.items():
            value = overrides.get(name, declared)
            step = math.gcd(declared, CONST_STEP)
            smaller = value // 2
            if smaller < step or smaller % step or value % 2:
                continue
            trial = {**overrides, name: smaller}
            if not _constraints_hold(definition, {**axes, **trial}):
                continue
            saved = workload_bytes(problem, {**axes, **overrides}) - workload_bytes(problem, {**axes, **trial})
            if saved > 0:
                options.append((saved, name, smaller))
        if not options:
            break
        most = max(saved for saved, _, _ in options)
        leading = _stacking_order(definition, {**axes, **overrides})
        # Of the halvings that save at least half the most, the outermost dimension of the largest tensor first:
        # fewer experts (or layers, or stacked heads) also means fewer iterations of a reference looping over
        # them, where each iteration's small CPU products cost milliseconds whatever their size.
        _, name, smaller = min(
            (o for o in options if o[0] >= most / 2), key=lambda o: (leading.get(o[1], len(leading)), -o[0])
        )
        overrides[name] = smaller
    return overrides


def _stacking_order(definition, axes: dict[str, int]) -> dict[str, int]:
    """Axis -> its position in the shape of the largest tensor at `axes` (0: the outermost)."""
    resolved = definition.resolve_axes(axes, const_overrides=True)
    largest = max(
        (t for t in (*definition.inputs.values(), *definition.outputs.values()) if t.shape),
        key=lambda t: math.prod(definition.shape_of(t, resolved)) * lookup_dtype(t.dtype).bits,
    )
    order: dict[str, int] = {}
    for position, dimension in enumerate(largest.shape):
        if isinstance(dimension, str):
            order.setdefault(dimension, position)
    return order


def _int_literals(source: str, skip: Sequence[BoundConstant] = ()) -> set[int]:
    """The integer literals of the reference's code (docstrings and comments, which quote shapes, left out), less
    the generator's statements that restate a const axis (`skip`): those follow the axis (spec.generator_constants)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    bound = {(c.line, c.start) for c in skip}
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and type(node.value) is int and (node.lineno, node.col_offset) not in bound
    }


def _const_size(definition: Definition, name: str) -> int:
    """The declared size of const axis `name`."""
    axis = definition.axes[name]
    assert isinstance(axis, ConstAxis)  # callers pass the names of const axes only (overrides, candidates)
    return axis.value


def _scalar_is_axis(workload: Workload, name: str, axis: str) -> bool:
    """Whether `workload`'s input `name` is an integer scalar equal to its var axis `axis`."""
    descriptor = workload.inputs.get(name)
    return (
        isinstance(descriptor, ScalarInput)
        and not isinstance(descriptor.value, bool)
        and descriptor.value == workload.axes.get(axis)
    )


def _in_a_shape(definition, axis: str) -> bool:
    return any(
        tensor.shape and axis in tensor.shape for tensor in (*definition.inputs.values(), *definition.outputs.values())
    )


def _constraints_hold(definition, axes: dict[str, int]) -> bool:
    try:
        resolved = definition.resolve_axes(axes, const_overrides=True)
        return all(not (names_in(c) <= set(resolved)) or evaluate(c, resolved) for c in definition.constraints)
    except (ValueError, SolbenchError):
        return False


def _check_scalable(problem: Problem) -> None:
    for workload in problem.workloads:
        for name, spec in workload.inputs.items():
            if isinstance(spec, SafetensorsInput):
                raise CpuTierSkipped(
                    f"workload {workload.uuid} input {name!r} is read from the safetensors file "
                    f"{spec.path} (key {spec.tensor_key}): a file's tensors cannot be scaled down, "
                    "so this problem has no CPU tier"
                )


class _Deriver:
    def __init__(
        self,
        problem: Problem,
        max_bytes: int,
        max_flops: float,
        analyze: bool,
        const_target: int | None = None,
        *,
        relations: AxisRelations | None = None,
    ):
        self.problem = problem
        self.const_target = const_target
        self.relations = relations or AxisRelations()
        """Relations of the var axes every derived workload keeps (empty: none beyond the constraints)."""
        self.definition = problem.definition
        self.max_bytes, self.max_flops = max_bytes, max_flops
        self.analyze = analyze
        self.var_axes = self.definition.var_axes
        published = {a: [w.axes[a] for w in problem.workloads if a in w.axes] for a in self.var_axes}
        self.floor = {a: min(v) if v else 1 for a, v in published.items()}
        self.step = {a: math.gcd(*v) if v and math.gcd(*v) > 1 else 1 for a, v in published.items()}
        self.bound_scalars = self._bound_scalars()
        self._last: list[Workload] = []
        self.unanalysed: list[str] = []
        """Why some workloads' FLOPs could not be counted (the analysis needs real values it cannot make)."""
        self.overrides: dict[str, int] = {}
        """Const axes the CPU tier sizes down (only where the tensors at the smallest var axes exceed
        MAX_FLOOR_BYTES: 256 experts' weights, a 262,144-position KV cache); every derived workload carries them."""
        self.floor_bytes = workload_bytes(problem, self.floor)
        if self.floor_bytes > MAX_FLOOR_BYTES:
            self.overrides = shrunk_constants(problem, self.floor, const_target or max_bytes // CONST_TARGET_DIVISOR)
            self.floor = {**self.floor, **self.overrides}
            self.floor_bytes = workload_bytes(problem, self.floor)
        self.byte_budget = max(max_bytes, self.floor_bytes + max_bytes // 2)
        """Where constant-sized tensors alone come near `max_bytes`: half of it on top of the smallest workload."""
        self.flop_budget = max_flops

    @property
    def cost_name(self) -> str:
        return "size-based bytes and analyzer FLOPs" if self.analyze else "size-based bytes"

    def budget_text(self) -> str:
        text = f"≤ {self.byte_budget / 1e6:.0f} MB of inputs and outputs"
        if self.byte_budget > self.max_bytes:
            text += f" (constant-sized tensors take {self.floor_bytes / 1e6:.0f} MB at the smallest axis values)"
        return text + (f", ≤ {self.flop_budget / 1e9:.3g} GFLOP" if self.analyze else "")

    def note(self) -> str:
        notes = []
        if self.overrides:
            declared = {a: _const_size(self.definition, a) for a in self.overrides}
            notes.append(
                "; const axes sized down for the CPU: "
                + ", ".join(f"{a} {declared[a]} -> {v}" for a, v in self.overrides.items())
            )
        if self.unanalysed:
            notes.append(f"; FLOPs of {len(self.unanalysed)} workload(s) not counted: {self.unanalysed[0]}")
        return "".join(notes)

    def _bound_scalars(self) -> dict[str, str]:
        """Integer scalar inputs equal to the same var axis in every published workload: input -> axis."""
        bound = {}
        for name, tensor in self.definition.inputs.items():
            if tensor.shape is not None:
                continue
            for axis in self.var_axes:
                if all(_scalar_is_axis(w, name, axis) for w in self.problem.workloads):
                    bound[name] = axis
                    break
        return bound

    # -- the budget -------------------------------------------------------------------------------------

    def published_fit(self) -> bool:
        """Every published workload within `max_bytes`, and the largest within the FLOP budget (when analysing,
        a largest one that cannot be analysed does not count as fitting)."""
        if any(workload_bytes(self.problem, w) > self.max_bytes for w in self.problem.workloads):
            return False
        if not self.analyze:
            return True
        largest = max(self.problem.workloads, key=lambda w: workload_bytes(self.problem, w))
        flops = self._flops([largest])
        return flops is not None and flops[0] is not None and flops[0] <= self.flop_budget

    def _flops(self, workloads: list[Workload]) -> list[float | None] | None:
        """The analyzer's FLOPs per workload (None where it cannot count them), or None when not analysing."""
        if not self.analyze or not workloads:
            return None
        from solbench.hardware import lookup
        from solbench.sol import analyze_problem

        counted: list[float | None] = []
        for workload in workloads:  # one at a time: a workload the analysis cannot do leaves the others counted
            subset = Problem(root=self.problem.root, definition=self.definition, workloads=(workload,))
            try:
                # Without the problem's input generator: shape-only and fast. A reference whose work depends on
                # generated values (routing, NVFP4 scales) is then left to the byte budget.
                counted.append(analyze_problem(subset, lookup(ANALYSIS_HARDWARE))[0].flops)
            except Exception as error:  # the problem's own code raised under analysis: bytes alone decide
                counted.append(None)
                self.unanalysed.append(f"{type(error).__name__}: {str(error)[:160]}")
        return counted

    # -- deriving ---------------------------------------------------------------------------------------

    def derive(self) -> list[Workload]:
        shrunk: dict[str, tuple[dict[str, int], Workload]] = {}
        for workload in self.problem.workloads:
            axes = self._shrink(
                {**{a: workload.axes[a] for a in self.var_axes}, **self.overrides},
                lambda ax: workload_bytes(self.problem, ax) <= self.byte_budget,
            )
            shrunk.setdefault(_key(axes), (axes, workload))
        candidates = list(shrunk.values())
        if len(candidates) < MIN_WORKLOADS:
            candidates += self._ladder(candidates, MIN_WORKLOADS - len(candidates))
        workloads = [self._workload(axes, source) for axes, source in candidates]
        floor_flops = self._flops([self._workload(self.floor, self.problem.workloads[0])])
        if floor_flops and floor_flops[0] is not None:
            self.flop_budget = max(self.max_flops, floor_flops[0] * 1.25)  # a quarter on top of the smallest
        over: list[int] = []
        flops = None
        for _ in range(4):  # FLOPs over budget: halve again and re-analyse those
            flops = self._flops(workloads)
            if flops is None:
                break
            over = [i for i, f in enumerate(flops) if f is not None and f > self.flop_budget]
            if not over:
                break
            changed = False
            for i in over:
                axes = {**{a: workloads[i].axes[a] for a in self.var_axes}, **self.overrides}
                smaller = self._shrink(axes, lambda _ax: False, steps=1)
                if smaller != axes:
                    workloads[i] = self._workload(smaller, candidates[i][1])
                    changed = True
            if not changed:
                break
        if over and len(over) < len(workloads):  # those that cannot shrink further go, the others stay
            assert flops is not None  # `over` is only set from counted FLOPs
            workloads = [w for i, w in enumerate(workloads) if i not in set(over)]
            flops = [f for i, f in enumerate(flops) if i not in set(over)]
        if flops is not None:
            workloads = self._uncounted_kept_small(workloads, flops)
        unique: dict[str, Workload] = {}
        for workload in sorted(workloads, key=lambda w: workload_bytes(self.problem, w)):
            unique.setdefault(_key(dict(workload.axes)), workload)
        chosen = _spread(list(unique.values()), MAX_WORKLOADS)
        self._last = chosen
        return chosen

    def _uncounted_kept_small(self, workloads: list[Workload], flops: list[float | None]) -> list[Workload]:
        """Workloads whose FLOPs the analysis could not count, held to a stricter size instead.

        Where constant-sized tensors dominate (weights the work multiplies every token with), the work grows with
        the var axes whatever the bytes say: at most twice the smallest workload's var-axis product. Elsewhere a
        quarter of the byte budget.
        """
        floor_product = math.prod(self.floor[a] for a in self.var_axes)
        dominated = self.floor_bytes > self.max_bytes // 2
        kept = []
        for workload, counted in zip(workloads, flops):
            if counted is not None:
                kept.append(workload)
                continue
            axes = {**{a: workload.axes[a] for a in self.var_axes}, **self.overrides}
            if dominated:
                axes = self._shrink(axes, lambda ax: math.prod(ax[a] for a in self.var_axes) <= 2 * floor_product)
            else:
                axes = self._shrink(axes, lambda ax: workload_bytes(self.problem, ax) <= self.max_bytes // 4)
            kept.append(workload if axes == dict(workload.axes) else self._workload(axes, workload))
        return kept

    def _shrink(self, axes: dict[str, int], fits, steps: int | None = None) -> dict[str, int]:
        """Halve the axis furthest above its floor until `fits(axes)` (or `steps` halvings, or nothing shrinks)."""
        axes = dict(axes)
        stuck: set[str] = set()
        done = 0
        while not fits(axes) and (steps is None or done < steps):
            movable = [a for a in self.var_axes if a not in stuck and axes[a] > self.floor[a]]
            if not movable:
                break
            axis = max(movable, key=lambda a: axes[a] / max(self.floor[a], 1))
            trial = self._halved(axes, axis)
            if trial is None or not self._valid(trial):
                stuck.add(axis)
                continue
            axes = trial
            done += 1
            if self.relations.at_most:  # the axis another had to stay at or under may have moved down
                stuck.clear()
        return axes

    def _halved(self, axes: dict[str, int], axis: str) -> dict[str, int] | None:
        """`axes` with `axis` halved (and the axes kept in a ratio with it), or None where one cannot shrink."""
        trial = dict(axes)
        for each in self.relations.tied(axis):
            smaller = max(self.floor[each], axes[each] // 2 // self.step[each] * self.step[each])
            if smaller >= axes[each]:
                return None
            trial[each] = smaller
        return trial

    def _ladder(self, candidates: list[tuple[dict[str, int], Workload]], wanted: int):
        """Extra sizes above the smallest candidate, doubling one axis at a time, while the bytes fit."""
        axes, source = min(candidates, key=lambda c: workload_bytes(self.problem, c[0]))
        seen = {_key(c[0]) for c in candidates}
        extra = []
        order = sorted(self.var_axes, key=lambda a: -max(w.axes[a] for w in self.problem.workloads))
        for turn in range(4 * wanted * max(len(order), 1)):
            if len(extra) >= wanted or not order:
                break
            axis = order[turn % len(order)]
            trial = {**axes, **{each: axes[each] * 2 for each in self.relations.tied(axis)}}
            if not self._valid(trial) or workload_bytes(self.problem, trial) > self.byte_budget:
                continue
            axes = trial
            if _key(axes) not in seen:
                seen.add(_key(axes))
                extra.append((axes, source))
        return extra

    def _valid(self, axes: dict[str, int]) -> bool:
        if self.relations.broken(axes):
            return False
        try:
            resolved = self.definition.resolve_axes(axes, const_overrides=True)
        except ValueError:
            return False
        for constraint in self.definition.constraints:
            try:
                if names_in(constraint) <= set(resolved) and not evaluate(constraint, resolved):
                    return False
            except SolbenchError:
                return False
        return True

    def _workload(self, axes: dict[str, int], source: Workload) -> Workload:
        inputs = dict(source.inputs)
        for name, axis in self.bound_scalars.items():
            inputs[name] = ScalarInput(value=axes[axis])
        label = f"{self.definition.name}/cpu/{_key(axes)}"
        data = source.model_dump(mode="json", exclude_none=True)
        data.update(
            uuid=str(uuid.uuid5(_UUID_NAMESPACE, label)),
            axes=dict(axes),
            inputs={n: s.model_dump(mode="json") for n, s in inputs.items()},
        )
        return Workload.model_validate(data)


def _key(axes: dict[str, int]) -> str:
    return json.dumps(axes, sort_keys=True)


def _spread(items: list, count: int) -> list:
    """At most `count` of `items` (sorted by size), evenly spaced, the first and last included."""
    if len(items) <= count:
        return items
    picks = sorted({round(i * (len(items) - 1) / (count - 1)) for i in range(count)})
    return [items[i] for i in picks]
