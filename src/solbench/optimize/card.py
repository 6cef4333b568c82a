"""The problem card: everything an agent may see about a problem before it writes a candidate.

Held-out workloads never appear here; the card says only how many there are.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from solbench.hardware.spec import HardwareSpec
from solbench.optimize.budget import BudgetLeft
from solbench.optimize.contract import SolutionContract, usable_languages
from solbench.spec.definition import Definition
from solbench.spec.workload import Workload


class _Card(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class WorkloadCard(_Card):
    """One public workload: its sizes and inputs, and the two times a candidate is judged between."""

    uuid: str
    axes: dict[str, int]
    """Every axis resolved, const and expression axes included."""
    inputs: dict[str, Any]
    """How each input is made (random from a secret seed, scalar, safetensors, custom)."""
    tolerance: dict[str, Any]
    """When an output counts as matching the reference."""
    t_sol_ms: float
    """The speed of light on the card's hardware: no kernel can be faster."""
    bound: str
    """What T_SOL is bound by (memory, a compute unit)."""
    t_b_ms: float | None
    """The baseline T_b a candidate is compared with; None when the reference failed on this workload."""
    t_b_source: str
    """Where T_b came from: a baselines file's entry, the T_b pinned on this machine (optimize/pinned_t_b.py: the
    first environment to time the reference pins it, every later one reads it), the reference timed by this
    environment where pinning is off, or why there is none (the reference did not pass here)."""


class ProblemCard(_Card):
    """What `env.reset()` returns."""

    problem: str
    """The definition's name; a solution's `definition` field must say this."""
    definition: Definition
    reference_source: str
    """The reference program (`run(...)`) whose outputs a candidate must match."""
    workloads: list[WorkloadCard]
    """The public workloads, in the problem's order; the reward is computed over these."""
    held_out_workloads: int
    """How many workloads are held out for `finalize` (which ones is never shown)."""
    hardware: HardwareSpec
    """The hardware T_SOL is computed for, as T_SOL reads it: every rate (special ops included) and where each
    figure came from (`solbench hw show ID`)."""
    device: str
    """Where candidates run (cpu, cuda)."""
    languages: list[str]
    """Solution languages that can run on this device."""
    reward: str
    """The reward `env.step` returns: sol, speedup, log_speedup or gated_sol."""
    contract: SolutionContract
    """How to write a solution: the schema, the entry point and calling styles in this problem's names, the
    languages and how each is built, the tolerances and precision rule, the static rules, how to test."""
    budget_left: BudgetLeft
    seed: int | None = None
    """The seed given to `reset`; it seeds nothing the evaluator uses (its input seeds are secret)."""


def workload_card(
    workload: Workload, axes: dict[str, int], t_sol_ms: float, bound: str, t_b_ms: float | None, t_b_source: str
) -> WorkloadCard:
    return WorkloadCard(
        uuid=workload.uuid,
        axes=axes,
        inputs={name: spec.model_dump(mode="json") for name, spec in workload.inputs.items()},
        tolerance=workload.effective_tolerance.model_dump(mode="json"),
        t_sol_ms=t_sol_ms,
        bound=bound,
        t_b_ms=t_b_ms,
        t_b_source=t_b_source,
    )


def languages_for(device: str) -> list[str]:
    """Every language on CUDA; on a CPU the ones that need no CUDA device (Triton runs by its interpreter)."""
    return [language.value for language in usable_languages(device)]
