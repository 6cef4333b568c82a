"""Addressable time -> suite problems, by op family and shape class.

A family names the suite op_types that implement it (``FAMILY_OP_TYPES``; a rules file's ``op_types``
extends it); backward time looks for the ``_backward`` op_types. Among the problems of a matching
op_type, the best evidence wins, in this order:

- ``model``: same op_type and the problem was taken from this model (a ``model:`` tag), narrowed to
  those of the op's shape class where any are;
- ``shape``: same op_type and the op's innermost dimension is one of the problem's constant axis sizes;
- ``family``: same op_type at another size (a kernel for it exists, tuned for other shapes).

The group's time is split evenly among the problems of the best level. Time whose family no problem
implements is uncovered, and the report lists it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from solbench.reach.attribution import Attribution, GroupKey
from solbench.reach.rules import ADDRESSABLE
from solbench.reach.suite_index import SuiteProblem

FAMILY_OP_TYPES: dict[str, tuple[str, ...]] = {
    "embedding_bag": ("embedding_bag", "embedding_bag_pooling", "embedding_lookup"),
    "embedding": ("embedding", "gather"),
    "rmsnorm": ("rmsnorm", "add_rmsnorm", "fused_add_rmsnorm"),
    "layernorm": ("layernorm", "add_layernorm"),
    "groupnorm": ("groupnorm",),
    "activation": ("activation", "swiglu", "geglu", "silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul"),
    "rope": ("rope",),
    "softmax": ("softmax",),
    "log_softmax": ("log_softmax", "softmax"),
    "cross_entropy": ("cross_entropy",),
    "topk": ("topk", "moe_routing"),
    "cumsum": ("cumsum",),
    "argmax": ("argmax",),
    "dcn_cross": ("dcn_cross", "dcn_cross_layer", "cross_layer"),
    "feature_interaction": ("feature_interaction", "interaction", "dlrm_interaction"),
    "mlp": ("mlp", "mlp_block"),
    "jagged": ("jagged_to_padded", "jagged"),
    "optimizer": ("optimizer", "adagrad", "adam", "sgd"),
}

LEVELS = ("model", "shape", "family")


@dataclass
class SuiteCoverage:
    """How the suite's problems cover a model's addressable time: per problem, per addressable group, and what no
    problem covers."""

    problem_us: dict[str, list[float]] = field(default_factory=dict)
    """Problem name -> addressable time it covers, per step."""
    problem_level: dict[str, str] = field(default_factory=dict)
    problem_info: dict[str, SuiteProblem] = field(default_factory=dict)
    group_match: dict[GroupKey, tuple[str | None, tuple[str, ...]]] = field(default_factory=dict)
    """Addressable group -> (level or None, problems sharing its time)."""
    uncovered_us: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    """(family, pass) -> addressable time no problem covers, per step."""


def _fold(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _same_model(problem_models: tuple[str, ...], model_name: str) -> bool:
    """One of the problem's model tags names this model (``dlrm-dcnv2`` and ``DLRM-DCNv2 (MLPerf …)`` agree)."""
    b = _fold(model_name)
    return any(a and b and (a in b or b in a) for a in map(_fold, problem_models))


def op_types_for(family: str, pass_: str, overrides: Mapping[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    base = (overrides or {}).get(family) or FAMILY_OP_TYPES.get(family, (family,))
    return tuple(f"{t}_backward" for t in base) if pass_ == "backward" else base


def cover(
    attribution: Attribution,
    suite: list[SuiteProblem],
    model_name: str,
    op_type_overrides: Mapping[str, tuple[str, ...]] | None = None,
) -> SuiteCoverage:
    coverage = SuiteCoverage()
    steps = len(attribution.step_us)
    problem_us: dict[str, list[float]] = defaultdict(lambda: [0.0] * steps)
    uncovered: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0] * steps)
    by_op_type: dict[str, list[SuiteProblem]] = defaultdict(list)
    for problem in suite:
        by_op_type[problem.op_type].append(problem)
    for key, series in attribution.groups.items():
        if key.cls != ADDRESSABLE:
            continue
        candidates = [p for t in op_types_for(key.family, key.pass_, op_type_overrides) for p in by_op_type.get(t, [])]
        levels = {
            "model": [p for p in candidates if _same_model(p.models, model_name)],
            "shape": [p for p in candidates if key.width is not None and key.width in p.sizes],
            "family": candidates,
        }
        level = next((name for name in LEVELS if levels[name]), None)
        if level is None:
            for i, value in enumerate(series):
                uncovered[(key.family, key.pass_)][i] += value
            coverage.group_match[key] = (None, ())
            continue
        chosen = levels[level]
        if level == "model":  # several problems of this model: those of the op's shape, where any
            chosen = [p for p in chosen if key.width in p.sizes] or chosen
        for problem in chosen:
            coverage.problem_info[problem.name] = problem
            best = coverage.problem_level.get(problem.name)
            if best is None or LEVELS.index(level) < LEVELS.index(best):
                coverage.problem_level[problem.name] = level
            for i, value in enumerate(series):
                problem_us[problem.name][i] += value / len(chosen)
        coverage.group_match[key] = (level, tuple(p.name for p in chosen))
    coverage.problem_us = dict(problem_us)
    coverage.uncovered_us = dict(uncovered)
    return coverage
