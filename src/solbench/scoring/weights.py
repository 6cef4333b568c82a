"""Runtime-weighted scores: each problem's S weighted by its share of a real model's addressable time.

The weights come from a ``solbench reach`` report's ``problem_weights`` (problem -> share of the model's
addressable step time). The score layer reads only that field through `RuntimeWeights`, so it does not
depend on the reach layer above it. A problem solved by several solutions counts with its best S.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from solbench.json_files import read_json_file
from solbench.scoring.errors import ScoreError
from solbench.scoring.report import ScoreReport


class RuntimeWeights(BaseModel):
    """The part of a reach report (or any JSON of that shape) that weights scores."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    model: str = "model"
    problem_weights: dict[str, float] = Field(default_factory=dict)


class WeightedProblem(BaseModel):
    model_config = ConfigDict(frozen=True)
    definition: str
    weight: float
    score: float | None


class WeightedScore(BaseModel):
    """S weighted by runtime share next to the plain mean over the same problems."""

    model_config = ConfigDict(frozen=True)
    model: str
    weighted: float | None
    """sum(w_p S_p) / sum(w_p) over the weighted problems that have an S; None when none has."""
    unweighted: float | None
    """The plain mean S over those same problems."""
    weight_scored: float
    """Share of the model's addressable time the scored problems stand for."""
    weight_missing: float
    """Share standing for weighted problems these traces do not score."""
    problems: list[WeightedProblem]


def load_weights(path: Path) -> RuntimeWeights:
    data = read_json_file(path, "weights file", ScoreError)
    try:
        weights = RuntimeWeights.model_validate(data)
    except ValidationError as error:
        raise ScoreError(f"cannot read weights file {path}: {str(error).splitlines()[0]}") from None
    if not weights.problem_weights:
        raise ScoreError(f"{path}: no problem_weights (write one with solbench reach MODEL -o REPORT)")
    if not all(math.isfinite(w) and w >= 0 for w in weights.problem_weights.values()):
        raise ScoreError(f"{path}: problem_weights must be finite and not negative")
    return weights


def weighted_score(report: ScoreReport, weights: Mapping[str, float], model: str = "model") -> WeightedScore:
    best: dict[str, float | None] = {}
    for problem in report.problems:
        if problem.score is not None:
            best[problem.definition] = max(problem.score, best.get(problem.definition) or 0.0)
        else:
            best.setdefault(problem.definition, None)
    rows = [
        WeightedProblem(definition=name, weight=weight, score=best.get(name))
        for name, weight in sorted(weights.items(), key=lambda item: -item[1])
    ]
    scored = [(row.weight, row.score) for row in rows if row.score is not None]
    total = sum(weight for weight, _ in scored)
    return WeightedScore(
        model=model,
        weighted=sum(weight * score for weight, score in scored) / total if total else None,
        unweighted=sum(score for _, score in scored) / len(scored) if scored else None,
        weight_scored=total,
        weight_missing=sum(row.weight for row in rows if row.score is None),
        problems=rows,
    )
