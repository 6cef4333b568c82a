"""Profile -> time per class and per op group, each as a per-step series (so every figure has a spread)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from solbench.reach.built_model import DepthScaling
from solbench.reach.families import family_of, pass_of, width_of
from solbench.reach.profile import Profile
from solbench.reach.rules import ADDRESSABLE, FRAMEWORK, Rules

UNATTRIBUTED = "unattributed"
"""Step time no op record covers (Python between ops, profiler gaps): step duration minus all self times."""


@dataclass(frozen=True)
class GroupKey:
    cls: str
    family: str
    pass_: str
    op: str
    width: int | None


@dataclass
class Attribution:
    step_us: list[float]
    classes: dict[str, list[float]]
    """class -> self time per step (µs); includes framework and unattributed."""
    groups: dict[GroupKey, list[float]]
    """(class, family, pass, op, width) -> self time per step (µs)."""
    full_depth: dict[str, list[float]] | None = None
    """class -> self time per step with every repeated layer's time multiplied up to the published depth
    (inference only: backward ops carry no module context to tell which layer ran them)."""

    def fraction(self, cls: str) -> list[float]:
        return [c / s if s else 0.0 for c, s in zip(self.classes.get(cls, [0.0] * len(self.step_us)), self.step_us)]

    def vendor_classes(self) -> list[str]:
        return [c for c in self.classes if c not in (ADDRESSABLE, FRAMEWORK, UNATTRIBUTED)]


def attribute(
    profile: Profile, rules: Rules, module_families: Mapping[str, str] | None = None, depth: DepthScaling | None = None
) -> Attribution:
    steps = profile.steps
    # The layer scaling, when the full-depth times are extrapolated (inference only).
    scaling = (
        None
        if depth is None or any(call.backward_of or pass_of(call) == "optimizer" for call in profile.calls)
        else depth
    )
    extrapolate = scaling is not None
    full: dict[str, list[float]] = defaultdict(lambda: [0.0] * steps)
    classes: dict[str, list[float]] = defaultdict(lambda: [0.0] * steps)
    groups: dict[GroupKey, list[float]] = defaultdict(lambda: [0.0] * steps)
    for cls in list(rules.classes) + [ADDRESSABLE, FRAMEWORK]:
        classes[cls]  # every class appears, zero where the model has none
    for call in profile.calls:
        cls = rules.classify(call.name, call.ancestors)
        family = family_of(call, module_families) if cls == ADDRESSABLE else cls
        key = GroupKey(cls, family, pass_of(call), call.name, width_of(call) if cls == ADDRESSABLE else None)
        classes[cls][call.step] += call.self_us
        groups[key][call.step] += call.self_us
        if scaling is not None:
            in_layer = any(fnmatchcase(m, scaling.layer_glob) for m in call.modules)
            full[cls][call.step] += call.self_us * (scaling.factor if in_layer else 1.0)
    attributed = [sum(values[i] for values in classes.values()) for i in range(steps)]
    classes[UNATTRIBUTED] = [max(0.0, s - a) for s, a in zip(profile.step_us, attributed)]
    step_us = [max(s, a) for s, a in zip(profile.step_us, attributed)]
    if extrapolate:
        full[UNATTRIBUTED] = list(classes[UNATTRIBUTED])
    return Attribution(
        step_us=step_us, classes=dict(classes), groups=dict(groups), full_depth=dict(full) if extrapolate else None
    )
