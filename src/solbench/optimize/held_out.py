"""Which workloads an agent never sees: the held-out split, decided by a rule anyone can recompute.

The default holds out floor(n / 4) of a problem's n workloads (none below four workloads), the
ones whose sha256("<definition>/<uuid>") sorts last. The rule is deterministic on purpose: every
agent, every rerun and every replay of a problem faces the same split, so results compare. It
does not hide the workload files from an agent that can read the problem folder; what it keeps
from the agent is any feedback on those workloads until `finalize`, where they are measured for
the first time, with the evaluator's fresh secret input seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from solbench.optimize.errors import InvalidHeldOut
from solbench.spec.problem import Problem
from solbench.spec.workload import Workload

DEFAULT_HELD_OUT_FRACTION = 0.25

HeldOut = Iterable[str] | float | None
"""None: the default rule; a fraction in [0, 1): that share by the same ranking; workload uuids: exactly those."""


def split_workloads(problem: Problem, held_out: HeldOut = None) -> tuple[tuple[Workload, ...], tuple[Workload, ...]]:
    """(public, held-out) workloads of `problem`, each in the problem's order; at least one stays public."""
    workloads = problem.workloads
    if held_out is None or isinstance(held_out, (int, float)) and not isinstance(held_out, bool):
        chosen = _ranked_share(problem, DEFAULT_HELD_OUT_FRACTION if held_out is None else float(held_out))
    elif isinstance(held_out, (str, bytes)):
        raise InvalidHeldOut(f"{held_out!r}: give a list of workload uuids, not one string")
    elif isinstance(held_out, bool):
        raise InvalidHeldOut(f"{held_out!r}: give a fraction in [0, 1) or a list of workload uuids")
    else:
        chosen = set(held_out)
        unknown = sorted(chosen - {w.uuid for w in workloads})
        if unknown:
            raise InvalidHeldOut(
                f"{', '.join(unknown)}: not a workload of {problem.name} ({problem.root / 'workload.jsonl'})"
            )
    public = tuple(w for w in workloads if w.uuid not in chosen)
    if not public:
        raise InvalidHeldOut(f"every workload of {problem.name} would be held out; leave at least one public")
    return public, tuple(w for w in workloads if w.uuid in chosen)


def _ranked_share(problem: Problem, fraction: float) -> set[str]:
    if not 0 <= fraction < 1:
        raise InvalidHeldOut(f"{fraction!r}: a fraction must be at least 0 and below 1")
    count = int(len(problem.workloads) * fraction)
    ranked = sorted(problem.workloads, key=lambda w: hashlib.sha256(f"{problem.name}/{w.uuid}".encode()).hexdigest())
    return {w.uuid for w in ranked[len(ranked) - count :]} if count else set()
