"""Every workload's admissible matrix precision in one analysis, under the tolerance policy (sol/precision.py).

A check runs the reference up to four times, so an analysis checks only a problem's smallest workloads whose matrix
work fits this CPU, and a larger workload takes the lowest precision admitted on a checked workload whose tolerance
is at least as strict (the error of low-precision products relative to the result barely depends on size).

Where every published workload is too large to check (a decoder layer's 877 MB of weights, a B200-sized image), no
workload is checked and none can be inferred. Such a workload is decided on the problem's CPU tier
(``workload.cpu.jsonl``, spec/tiers.py), whose workloads were sized for this CPU: its smallest is checked once under
each undecided workload's own tolerance. One reference run and at most three emulated runs serve all the tolerances
together (`precision.check_admissible_under`), and each result is cached as any check is. A workload stays "not
determined" (the fp32-accurate rate) only where its problem has no CPU tier or that check cannot run here.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from solbench.errors import SolbenchError
from solbench.sol.precision import (
    MATRIX_PRECISIONS,
    check_admissible_under,
    checked_record,
    load_cached,
    store_cached,
    workload_record,
)
from solbench.spec.problem import Problem, load_problem
from solbench.spec.tiers import has_cpu_tier
from solbench.spec.trace import PrecisionRecord
from solbench.spec.workload import Tolerance, Workload
from solbench.torch_threads import at_most_threads

CHECK_BUDGET_FLOPS = 5e10
"""Largest matrix work (FLOPs) one workload's check runs in an analysis (a second or two per run here);
larger workloads take the precision checked on the problem's smaller workloads with a tolerance as strict."""
CHECKED_PER_PROBLEM = 2
"""Workloads an analysis checks (the smallest): enough to learn what the tolerance admits, few enough that a
first, uncached `solbench sol` stays within seconds. The evaluator checks every workload it evaluates."""
CHECK_BUDGET_BYTES = 1 << 30
"""Largest input set (bytes) a check runs on."""
CHECK_BUDGET_S = 15.0
"""Seconds after which an analysis starts no further check (a safety net on a loaded machine)."""
CHECK_RUN_BUDGET_S = 5.0
"""A reference whose real run on the check's inputs takes longer is not rerun three more times in an
analysis (a Python loop over time steps, say): the workload is inferred or left undetermined."""
ONE_THREAD_FLOPS = 2e9
"""Matrix work (FLOPs) up to which an analysis' check runs on one intra-op thread (`torch_threads.at_most_threads`)."""
TOO_LARGE = "too large to check on this CPU and no smaller workload with a tolerance as strict checked"


def problem_records(
    problem: Problem, module, make_inputs, matrix_flops: dict[str, float]
) -> dict[str, PrecisionRecord]:
    """Under the tolerance policy, a record per workload uuid: checked where the workload's matrix work
    (`matrix_flops`, from the analysis) fits this CPU's budget, else inferred from the checked workloads
    whose tolerance is at least as strict, else checked on the problem's CPU tier under its tolerance, else fp32
    with the reason."""
    records: dict[str, PrecisionRecord] = {}
    deadline = time.monotonic() + CHECK_BUDGET_S
    checks_left = CHECKED_PER_PROBLEM
    for workload in sorted(problem.workloads, key=lambda w: matrix_flops.get(w.uuid, 0.0)):
        cached = load_cached(problem, workload)
        if cached is not None:  # counted as a check, so that a second analysis checks no further workloads
            records[workload.uuid] = cached
            checks_left -= 1
            continue
        if matrix_flops.get(workload.uuid, 0.0) == 0.0:
            records[workload.uuid] = PrecisionRecord(
                policy="tolerance", matrix_precision="fp32", basis="tolerance: no fp32 matrix work to lower"
            )
            continue
        if (
            matrix_flops[workload.uuid] > CHECK_BUDGET_FLOPS
            or make_inputs is None
            or checks_left <= 0
            or time.monotonic() > deadline
        ):
            continue
        checks_left -= 1
        threads = 1 if matrix_flops[workload.uuid] <= ONE_THREAD_FLOPS else None
        with at_most_threads(threads):  # the truth run and the emulated reruns share one thread count
            record = _checked_record(problem, workload, module, make_inputs)
        if record is not None:
            records[workload.uuid] = record
    undecided = []
    for workload in problem.workloads:
        if workload.uuid not in records:
            inferred = _inferred(workload, problem.workloads, records)
            if inferred is None:
                undecided.append(workload)
            else:
                records[workload.uuid] = inferred
    if undecided:
        records.update(_decided_on_cpu_tier(problem, module, make_inputs, undecided, deadline))
    return records


def _checked_record(problem: Problem, workload: Workload, module, make_inputs):
    """The workload's record from a real check, or None where its inputs cannot be made here (missing data), are
    too large, or the reference's run takes too long to be rerun three more times."""
    import torch

    try:
        inputs = make_inputs(problem, workload, module, draw=0)
        if _input_bytes(inputs) > CHECK_BUDGET_BYTES:
            return None
        started = time.monotonic()
        with torch.no_grad():
            truth = module.run(*inputs)
    except Exception:
        return None
    if time.monotonic() - started > CHECK_RUN_BUDGET_S:
        return None
    return workload_record(problem, workload, lambda values: module.run(*values), inputs, truth)


def _input_bytes(inputs: list) -> int:
    import torch

    return sum(v.numel() * v.element_size() for v in inputs if isinstance(v, torch.Tensor))


def at_least_as_strict(tighter: Tolerance, looser: Tolerance) -> bool:
    """Whether meeting `tighter` implies meeting `looser` elementwise (atol, rtol, ratio and cap)."""
    cap_ok = looser.max_error_cap is None or (
        tighter.max_error_cap is not None and tighter.max_error_cap <= looser.max_error_cap
    )
    return (
        tighter.max_atol <= looser.max_atol
        and tighter.max_rtol <= looser.max_rtol
        and tighter.required_matched_ratio >= looser.required_matched_ratio
        and cap_ok
        and (looser.allow_negative_inf or not tighter.allow_negative_inf)
    )


def _inferred(
    workload: Workload, workloads: Iterable[Workload], records: dict[str, PrecisionRecord]
) -> PrecisionRecord | None:
    """A precision admitted on a checked workload whose tolerance is at least as strict as this one's is
    admitted here too; None where no such workload was checked."""
    tolerance = workload.effective_tolerance
    checked = [
        (w.uuid, records[w.uuid])
        for w in workloads
        if w.uuid in records
        and at_least_as_strict(w.effective_tolerance, tolerance)
        and records[w.uuid].basis.startswith("tolerance: checked")
    ]
    if not checked:
        return None
    lowest = MATRIX_PRECISIONS[min(MATRIX_PRECISIONS.index(record.matrix_precision) for _, record in checked)]
    errors = [
        record.admitted_error for _, record in checked if record.matrix_precision == lowest and record.admitted_error
    ]
    return PrecisionRecord(
        policy="tolerance",
        matrix_precision=lowest,
        admitted_error=[max(column) for column in zip(*errors)] if errors else None,
        basis=f"tolerance: inferred from {len(checked)} smaller workload(s) with a tolerance as "
        f"strict (too large to check on this CPU)",
    )


def _not_determined(why: str) -> PrecisionRecord:
    return PrecisionRecord(
        policy="tolerance", matrix_precision="fp32", basis=f"tolerance: not determined ({why}): fp32-accurate"
    )


# --- the CPU tier -----------------------------------------------------------------------------------
def _decided_on_cpu_tier(
    problem: Problem, module, make_inputs, workloads: list[Workload], deadline: float
) -> dict[str, PrecisionRecord]:
    """A record per workload of `workloads`, from the problem's smallest CPU-tier workload checked under each one's
    tolerance; not determined, with the reason, where the problem has no CPU tier or that check cannot run."""
    root = getattr(problem, "root", None)
    if make_inputs is None or root is None or not has_cpu_tier(root):
        return {w.uuid: _not_determined(TOO_LARGE) for w in workloads}
    try:
        tier = load_problem(root, "cpu")
    except SolbenchError as error:
        return {w.uuid: _not_determined(f"{TOO_LARGE}; its CPU tier cannot be read: {error}") for w in workloads}
    if not tier.workloads:
        return {w.uuid: _not_determined(f"{TOO_LARGE}; its CPU tier holds no workload") for w in workloads}
    candidate = min(tier.workloads, key=lambda w: tier.tensor_bytes(tier.axes_of(w)))
    tolerances = {w.effective_tolerance.model_dump_json(): w.effective_tolerance for w in workloads}
    outcomes = dict(
        zip(tolerances, _checked_under(tier, candidate, list(tolerances.values()), module, make_inputs, deadline))
    )
    where = (
        f"tolerance: inferred from CPU-tier workload {candidate.uuid} ({_axes_text(candidate)}) checked under "
        "this workload's tolerance"
    )
    records = {}
    for workload in workloads:
        outcome = outcomes[workload.effective_tolerance.model_dump_json()]
        records[workload.uuid] = (
            _not_determined(f"{TOO_LARGE}; its CPU-tier workload {candidate.uuid} could not be checked: {outcome}")
            if isinstance(outcome, str)
            else _on_tier(outcome, where)
        )
    return records


def _checked_under(
    tier: Problem, candidate: Workload, tolerances: list[Tolerance], module, make_inputs, deadline: float
) -> list[PrecisionRecord | str]:
    """`candidate`'s check record under each of `tolerances` (each cached as the workload carrying that tolerance),
    or why it could not be decided here."""
    variants = [candidate.model_copy(update={"tolerance": t, "correctness": None}) for t in tolerances]
    outcomes: list[PrecisionRecord | str | None] = [load_cached(tier, variant) for variant in variants]
    missing = [index for index, outcome in enumerate(outcomes) if outcome is None]
    if missing:
        fresh = _check_now(tier, [variants[index] for index in missing], module, make_inputs, deadline)
        for index, outcome in zip(missing, [fresh] * len(missing) if isinstance(fresh, str) else fresh):
            outcomes[index] = outcome
    return [outcome for outcome in outcomes if outcome is not None]


def _check_now(
    tier: Problem, variants: list[Workload], module, make_inputs, deadline: float
) -> list[PrecisionRecord | str] | str:
    """One workload (carrying each of several tolerances) checked now: a record per variant (stored in the cache)
    or why that variant is undecided; or why the check could not run. One real run and at most three emulated ones,
    whatever the number of variants."""
    import torch

    spent = f"the analysis's {CHECK_BUDGET_S:g} s for checks were spent"
    if time.monotonic() > deadline:
        return spent
    try:
        inputs = make_inputs(tier, variants[0], module, draw=0)
        size = _input_bytes(inputs)
        if size > CHECK_BUDGET_BYTES:
            budget = CHECK_BUDGET_BYTES / 2**20
            return f"its inputs hold {size / 2**20:.3g} MiB, above the {budget:.3g} MiB a check runs on"
        started = time.monotonic()
        with torch.no_grad():
            truth = module.run(*inputs)
    except Exception as error:  # the reference's own failure, whatever its type: the reason says which
        return f"its reference did not run ({type(error).__name__}: {(str(error) or '-').splitlines()[0]})"
    seconds = time.monotonic() - started
    if seconds > CHECK_RUN_BUDGET_S:
        return f"its reference's real run took {seconds:.1f} s, above the {CHECK_RUN_BUDGET_S:g} s a check reruns"
    results = check_admissible_under(
        lambda values: module.run(*values), inputs, truth, [v.effective_tolerance for v in variants], deadline
    )
    outcomes: list[PrecisionRecord | str] = []
    for variant, (precision, tried) in zip(variants, results):
        if precision is None:  # the deadline came before a precision this tolerance admits
            outcomes.append(f"{spent} before it ended")
            continue
        record = checked_record(precision, tried, "on this workload")
        store_cached(tier, variant, record)
        outcomes.append(record)
    return outcomes


def _on_tier(checked: PrecisionRecord, where: str) -> PrecisionRecord:
    """A published workload's record from its CPU-tier check: the check's precision and errors, `where` as the basis,
    followed by the check's errors by precision."""
    _, _, errors = checked.basis.partition(" (relative error")
    return checked.model_copy(update={"basis": f"{where} (relative error{errors}" if errors else where})


def _axes_text(workload: Workload) -> str:
    return ", ".join(f"{name}={size}" for name, size in workload.axes.items())
