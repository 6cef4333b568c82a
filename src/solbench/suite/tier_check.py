"""Running the reference on CPU-tier workloads: do its outputs have the shapes the definition gives them?

A derived workload changes axes the definition ties only through its shapes, and the reference may assume more
(upstream L1/003 slices `logits_to_keep` rows out of `seq_len` ones: with `seq_len` below it, the output has
`seq_len` rows where the definition says `logits_to_keep`). Such a workload would end INVALID_REFERENCE in
every evaluation, so the derivation checks each one here first.

The run is shape-only where the reference allows: meta tensors, then fake ones (milliseconds, no input
generated). A reference whose work follows input values (MoE routing, NVFP4 scales read back with ``.item()``)
cannot run so; it runs for real on the generator's inputs where the caller asks (`run_for_real`), since a real
run can take seconds to a minute (NVFP4 weights quantised by the generator). A shape-only run that fails for any
other reason is repeated for real too: a failure is only reported once a real run shows it.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from solbench.spec.dtypes import lookup_dtype
from solbench.spec.problem import Problem
from solbench.spec.workload import ScalarInput, Workload

How = Literal["shape-only", "real run", "not run"]


@dataclass(frozen=True)
class WorkloadCheck:
    """What running the reference on one workload showed."""

    workload: Workload
    how: How
    disagreement: str | None = None
    """Why the workload does not hold (an output's shape, or what the reference raised); None where it holds or
    was not run."""
    values_needed: str = ""
    """Why a shape-only run could not decide (``not run``, or ``real run`` after one)."""

    def describe(self) -> str:
        return f"workload {dict(self.workload.axes)}: {self.disagreement}"


class _ValuesNeeded(Exception):
    """The shape-only run reached an op whose result depends on input values."""


def check_workloads(
    problem: Problem,
    workloads: Sequence[Workload],
    run_for_real: Callable[[Workload], bool] = lambda _w: True,
    *,
    shape_only: bool = True,
) -> list[WorkloadCheck]:
    """One verdict per workload of `workloads` (axes resolved by `problem`, whose definition they belong to).

    `run_for_real(workload)`: whether a workload whose reference needs input values is run for real (else its
    verdict is ``not run``). Without `shape_only`, every workload runs for real (where what the reference
    assumes of the values matters: a generator's constants bound to a const axis sized down)."""
    from solbench.evaluation.reference import ReferenceProgram

    program = ReferenceProgram(problem.definition, "cpu")
    try:
        verdicts = []
        for workload in workloads:
            reason = ""
            if shape_only:
                try:
                    verdicts.append(
                        WorkloadCheck(workload, "shape-only", _shape_only(problem, workload, program.module))
                    )
                    continue
                except _ValuesNeeded as needed:
                    if not run_for_real(workload):
                        verdicts.append(WorkloadCheck(workload, "not run", values_needed=str(needed)))
                        continue
                    reason = str(needed)
                except Exception:  # a limit of meta or fake tensors, or the reference's own failure: a real run decides
                    pass
            verdicts.append(WorkloadCheck(workload, "real run", _real_run(problem, workload, program), reason))
        return verdicts
    finally:
        program.close()


def real_run_disagreement(problem: Problem, workloads: Sequence[Workload]) -> str | None:
    """The first disagreement a real run of the reference shows on `workloads`, or None where each holds."""
    for verdict in check_workloads(problem, workloads, shape_only=False):
        if verdict.disagreement:
            return verdict.describe()
    return None


def _shape_only(problem: Problem, workload: Workload, module) -> str | None:
    """The disagreement on meta tensors, else on fake ones (then with symbolic sizes); `_ValuesNeeded` where values
    steer the work."""
    import torch
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException, FakeTensorMode

    with _quiet(), torch.no_grad():
        try:
            return _disagreement(problem, workload, module.run(*_inputs_without_data(problem, workload, "meta")))
        except Exception:  # an op without a meta kernel, or a tensor made on the CPU inside: fake tensors next
            pass
        try:
            with FakeTensorMode():
                returned = module.run(*_inputs_without_data(problem, workload, None))
                return _disagreement(problem, workload, returned)
        except (DataDependentOutputException, DynamicOutputShapeException) as error:
            needed = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
        try:  # sizes that follow values (a nonzero's, a bincount's) as symbols: decides where none reaches an output
            from torch.fx.experimental.symbolic_shapes import ShapeEnv

            with FakeTensorMode(shape_env=ShapeEnv()):
                returned = module.run(*_inputs_without_data(problem, workload, None))
                return _disagreement(problem, workload, returned)
        except Exception:  # a branch on a value, or an output whose size follows values
            raise _ValuesNeeded(needed) from None


def _real_run(problem: Problem, workload: Workload, program) -> str | None:
    """The disagreement on the generator's inputs (seed 0), on the CPU, in this trusted process."""
    from solbench.evaluation.reference import ReferenceFailure
    from solbench.spec.inputs import InputContext, generate_inputs

    axes = problem.axes_of(workload)
    try:
        inputs = generate_inputs(InputContext(problem, workload, axes, "cpu"), 0, program.module)
        returned = program.run(inputs)  # its outputs, one per definition output (a count or type off raises)
    except ReferenceFailure as error:
        return str(error)[:240]
    except Exception as error:  # the problem's own generator raised on these axes
        return f"its input generator raised {type(error).__name__}: {str(error)[:200]}"
    for (name, tensor), value in zip(problem.definition.inputs.items(), inputs):
        expected = problem.definition.shape_of(tensor, axes)
        shape = getattr(value, "shape", None)
        if shape is not None and expected is not None and tuple(shape) != expected:
            return f"input {name!r} has shape {list(shape)}, the axes give {list(expected)}"
    return _disagreement(problem, workload, returned)


def _disagreement(problem: Problem, workload: Workload, returned) -> str | None:
    """How the reference's outputs differ from the definition's at the workload's axes, or None."""
    import torch

    definition = problem.definition
    names = list(definition.outputs)
    if isinstance(returned, dict):
        values = [returned.get(name) for name in names]
    elif isinstance(returned, (tuple, list)):
        values = list(returned)
    else:
        values = [returned]
    if len(values) != len(names):
        return f"the reference returned {len(values)} outputs, the definition has {len(names)} ({', '.join(names)})"
    axes = problem.axes_of(workload)
    for name, value in zip(names, values):
        spec = definition.outputs[name]
        expected = definition.shape_of(spec, axes)
        if not isinstance(value, torch.Tensor) or expected is None:
            continue
        if any(type(size) is not int for size in value.shape):  # a symbol (fake tensors with a shape env)
            raise _ValuesNeeded(f"the size of output {name!r} follows input values")
        if tuple(value.shape) != expected:
            return (
                f"the reference's output {name!r} is {spec.dtype}{list(value.shape)}, "
                f"the definition says {spec.dtype}{list(expected)}"
            )
    return None


def _inputs_without_data(problem: Problem, workload: Workload, device: str | None) -> list:
    """The workload's inputs as tensors without data (scalars keep their values)."""
    import torch

    axes = problem.axes_of(workload)
    values = []
    for name, tensor in problem.definition.inputs.items():
        dtype = lookup_dtype(tensor.dtype)
        shape = problem.definition.shape_of(tensor, axes)
        if shape is None:
            descriptor = workload.inputs.get(name)
            values.append(
                descriptor.value if isinstance(descriptor, ScalarInput) else (1.0 if dtype.is_floating else 1)
            )
        else:
            values.append(torch.empty(shape, dtype=dtype.torch_dtype(), device=device))
    return values


@contextmanager
def _quiet() -> Iterator[None]:
    """Torch's warnings and fake-tensor log lines about ops that cannot run without data: the real run follows."""
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)
