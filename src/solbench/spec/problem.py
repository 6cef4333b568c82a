"""Loading a problem directory (definition.json + workload.jsonl, and its CPU tier) and solution files."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from solbench.spec.definition import ConstAxis, Definition, TensorSpec
from solbench.spec.distribution import declaration_problem
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.errors import ConstraintError, MissingDataError, SpecError
from solbench.spec.expressions import evaluate, names_in
from solbench.spec.load_notes import (
    IGNORED_FIELD,
    KEPT_UPSTREAM_FIELDS,
    LoadNote,
    extra_fields,
    grouped,
    without_unknown_names,
    workload_notes,
)
from solbench.spec.solution import Solution
from solbench.spec.tiers import GPU_WORKLOAD_FILE, default_tier, published_stand_in, tier_files
from solbench.spec.validation import read_json, read_jsonl, validate_model
from solbench.spec.workload import SafetensorsInput, Workload

DEFINITION_FILE = "definition.json"
WORKLOAD_FILE = GPU_WORKLOAD_FILE


@dataclass(frozen=True)
class Problem:
    """A definition with its workloads, each workload's axes resolved and checked."""

    root: Path
    definition: Definition
    workloads: tuple[Workload, ...]
    warnings: tuple[str, ...] = ()
    notes: tuple[LoadNote, ...] = ()
    """What the files carry that is left unused, as upstream leaves it (each also one of `warnings`)."""
    tier: str = "gpu"
    """The tier loaded: ``gpu`` (workload.jsonl), ``cpu`` (workload.cpu.jsonl) or ``all`` (both, GPU first)."""
    workload_tiers: tuple[str, ...] = ()
    """The tier of each workload, in `workloads` order (empty: every workload is in `tier`)."""
    tier_note: str = ""
    """Where the CPU tier asked for is the published workloads (the folder needs none): why, for the output."""

    @property
    def name(self) -> str:
        return self.definition.name

    def tier_of(self, workload: Workload) -> str:
        """``gpu`` or ``cpu``: the file `workload` came from."""
        if self.workload_tiers:
            for candidate, tier in zip(self.workloads, self.workload_tiers):
                if candidate.uuid == workload.uuid:
                    return tier
        return "cpu" if self.tier == "cpu" else "gpu"

    def axes_of(self, workload: Workload) -> dict[str, int]:
        """Every axis's size for `workload`, a CPU-tier workload's const-axis overrides included (the loader
        admitted them only there)."""
        return self.definition.resolve_axes(dict(workload.axes), const_overrides=True)

    def const_overrides(self, workload: Workload) -> dict[str, int]:
        """The const axes `workload` gives another size than the definition's (CPU tier only), name -> size."""
        return const_overrides_of(self.definition, workload.axes)

    def shape_of(self, tensor: TensorSpec, workload: Workload):
        return self.definition.shape_of(tensor, self.axes_of(workload))

    def tensor_bytes(self, axes: dict[str, int], *, as_float64: bool = False) -> int:
        """Bytes of every input and output tensor at these `var` axis values (a size-based estimate of the
        traffic and of the memory one set of inputs and outputs takes); `as_float64`: of float64 copies of the
        floating-point ones only (the golden run's)."""
        resolved = self.definition.resolve_axes(dict(axes), const_overrides=True)
        total = 0
        for tensor in (*self.definition.inputs.values(), *self.definition.outputs.values()):
            shape = self.definition.shape_of(tensor, resolved)
            dtype = lookup_dtype(tensor.dtype)
            if shape is not None and (dtype.is_floating or not as_float64):
                total += math.prod(shape) * (64 if as_float64 else dtype.bits) // 8
        return total


def load_problem(path: Path | str, tier: str | None = None, *, device: str | None = None) -> Problem:
    """Read and check a problem directory; raises SpecError naming the file, line and field.

    `tier` is ``gpu``, ``cpu`` or ``all``; None picks by device (`spec.tiers.default_tier`: the CPU tier when
    `device` is the CPU and the folder has one). ``cpu`` on a folder without one reads the published workloads
    where each is small enough for a CPU (`tier_note` says so), else raises SpecError saying what to do
    (`spec.tiers.published_stand_in`). Workload uuids must be unique across the tiers read.
    """
    root = Path(path)
    if not root.is_dir():
        raise SpecError(root, None, "not a problem directory (expected a folder with definition.json)")
    definition_path = root / DEFINITION_FILE
    definition = validate_model(Definition, read_json(definition_path), definition_path)
    notes = [
        LoadNote(IGNORED_FIELD, definition_path, field, "unknown field, ignored")
        for field, _ in extra_fields(definition)
        if field not in KEPT_UPSTREAM_FIELDS
    ]
    chosen = tier or default_tier(root, device)
    files = tier_files(root, chosen)
    stand_in = chosen == "cpu" and files[0][0] == "gpu"
    workloads: list[Workload] = []
    tiers: list[str] = []
    seen: dict[str, tuple[Path, int]] = {}
    for tier_name, workload_path in files:
        count = len(workloads)
        for line, data in read_jsonl(workload_path):
            workload = validate_model(Workload, data, workload_path, line=line)
            if workload.uuid in seen:
                first_path, first_line = seen[workload.uuid]
                where = f"line {first_line}" if first_path == workload_path else f"{first_path.name} line {first_line}"
                raise SpecError(workload_path, "uuid", f"{workload.uuid!r} already used on {where}", line=line)
            seen[workload.uuid] = (workload_path, line)
            notes += workload_notes(definition, workload, workload_path, line)
            workload = without_unknown_names(definition, workload)
            _check_workload(definition, workload, workload_path, line, const_overrides=tier_name == "cpu")
            workloads.append(workload)
            tiers.append(tier_name)
        if len(workloads) == count:
            raise SpecError(workload_path, None, "no workloads")
    notes = grouped(notes)
    problem = Problem(
        root=root,
        definition=definition,
        workloads=tuple(workloads),
        warnings=tuple(str(note) for note in notes),
        notes=tuple(notes),
        tier=chosen,
        workload_tiers=tuple(tiers) if chosen == "all" or stand_in else (),
    )
    if not stand_in:
        return problem
    note = published_stand_in(root, [(w.uuid, problem.tensor_bytes(dict(w.axes))) for w in workloads])
    return replace(problem, tier_note=note)


def const_overrides_of(definition: Definition, axes: Mapping[str, int]) -> dict[str, int]:
    """The const axes `axes` sets to another size than `definition` declares (a CPU-tier override)."""
    overrides: dict[str, int] = {}
    for name, value in axes.items():
        axis = definition.axes.get(name)
        if isinstance(axis, ConstAxis) and value != axis.value:
            overrides[name] = value
    return overrides


def find_problem_folders(root: Path | str) -> list[Path]:
    """``root`` itself when it is a problem folder, else every problem folder below it, sorted."""
    root = Path(root)
    if (root / DEFINITION_FILE).is_file():
        return [root]
    if not root.is_dir():
        raise SpecError(root, None, "no such folder")
    folders = sorted(p.parent for p in root.glob(f"**/{DEFINITION_FILE}"))
    if not folders:
        raise SpecError(root, None, "no problem folders (definition.json) under this path")
    return folders


def _check_workload(
    definition: Definition, workload: Workload, path: Path, line: int, *, const_overrides: bool = False
) -> None:
    try:
        axes = definition.resolve_axes(dict(workload.axes), const_overrides=const_overrides)
    except ValueError as error:
        raise SpecError(path, None, f"workload {workload.uuid}: {error}", line=line) from None
    for index, constraint in enumerate(definition.constraints):
        if names_in(constraint) <= set(axes) and not evaluate(constraint, axes):
            raise ConstraintError(
                path,
                f"constraints[{index}]",
                f"workload {workload.uuid}: {constraint!r} does not hold for axes {workload.axes}",
                line=line,
            )
    missing = [name for name in definition.inputs if name not in workload.inputs]
    if missing:
        raise SpecError(path, f"inputs.{missing[0]}", f"workload {workload.uuid}: no descriptor for input", line=line)
    _check_distribution(definition, workload, path, line)
    uses_custom = any(spec.type == "custom" for spec in workload.inputs.values())
    if uses_custom and not definition.custom_inputs_entrypoint:
        raise SpecError(
            path,
            "inputs",
            f"workload {workload.uuid}: 'custom' inputs need the definition's custom_inputs_entrypoint",
            line=line,
        )


def _check_distribution(definition: Definition, workload: Workload, path: Path, line: int) -> None:
    """A statistical check must fit the definition: its draw axis leads every output, its random inputs are floats."""
    field = "tolerance" if workload.tolerance is not None else "correctness"
    check = workload.effective_tolerance.distribution
    problem = declaration_problem(check, definition) if check is not None else None
    if problem is not None:
        where, reason = problem
        raise SpecError(path, f"{field}.distribution.{where}", f"workload {workload.uuid}: {reason}", line=line)


def find_data_file(problem: Problem, relative: str, data_roots: tuple[Path, ...] = ()) -> Path:
    """Locate a safetensors file: in the data roots, the problem folder, or any folder above it."""
    candidates = [root / relative for root in data_roots]
    candidates += [folder / relative for folder in (problem.root.resolve(), *problem.root.resolve().parents)]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(root) for root in data_roots) or "no --data-root given"
    raise MissingDataError(
        problem.root / WORKLOAD_FILE,
        "path",
        f"safetensors file not found: {relative} (searched the problem folder, its parents, "
        f"and data roots: {looked}); download the data set or pass --data-root",
    )


def check_data_files(problem: Problem, data_roots: tuple[Path, ...] = ()) -> None:
    """Fail before any evaluation starts if a workload's data file is missing."""
    for workload in problem.workloads:
        for name, spec in workload.inputs.items():
            if isinstance(spec, SafetensorsInput):
                try:
                    find_data_file(problem, spec.path, data_roots)
                except MissingDataError as error:
                    raise MissingDataError(
                        error.path, f"inputs.{name}.path", f"workload {workload.uuid}: {error.reason}"
                    ) from None


def load_solution(path: Path | str) -> Solution:
    path = Path(path)
    return validate_model(Solution, read_json(path), path)
