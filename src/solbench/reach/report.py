"""The reach report: what `solbench reach --json` prints and ``-o REPORT.json`` writes (format ``solbench-reach/1``).

Shares are of the mean profiled step unless named otherwise; every ``*_std`` is the standard deviation
over the profiled steps. ``problem_weights`` (problem -> its share of the model's addressable time) is
what ``solbench score --weights`` reads.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

FORMAT = "solbench-reach/1"


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class ClassTime(_Value):
    cls: str
    ms: float
    ms_std: float
    share: float
    share_std: float


class ReachOpRow(_Value):
    """One op of the profiled model: its time and share of the step, its family and the problems that cover it
    (sol.analysis.OpRow is an op of a reference with its cost)."""

    op: str
    cls: str
    family: str
    pass_: str
    width: int | None
    ms: float
    share: float
    problems: list[str]
    match: str | None


class ProblemCoverage(_Value):
    problem: str
    set: str
    op_type: str
    match: str
    ms: float
    share_of_step: float
    share_of_addressable: float


class Uncovered(_Value):
    family: str
    pass_: str
    ms: float
    share_of_step: float
    share_of_addressable: float


class SpeedupUsed(_Value):
    problem: str
    speedup: float
    log_std: float
    count: int
    source: str


class ProjectionReport(_Value):
    source: str
    gain: float
    """Projected end-to-end gain (0.05 is 5 % less step time... expressed as speed: T_old / T_new - 1)."""
    low: float
    high: float
    median: float
    speedups: list[SpeedupUsed]


class FullDepth(_Value):
    """The profile extrapolated to the published depth: each repeated layer's op times multiplied by
    published / kept layers, the rest (embedding, final norm, LM head) as measured. An estimate, inference only."""

    layers_kept: int
    layers_published: int
    step_ms: float
    addressable_fraction: float
    addressable_fraction_std: float
    vendor_fraction: float
    shares: dict[str, float]


class ReachReport(_Value):
    format: str = FORMAT
    model: str
    kind: str
    mode: str
    device: str
    config: dict
    scaling: list[str]
    steps: int
    warmup: int
    step_ms: float
    step_ms_std: float
    wall_ms: float
    build_seconds: float
    profile_seconds: float
    addressable_fraction: float
    addressable_fraction_std: float
    vendor_fraction: float
    vendor_fraction_std: float
    classes: list[ClassTime]
    ops: list[ReachOpRow]
    problems_root: str | None
    covered_fraction: float
    """Share of the step the matched problems cover (addressable time with a problem)."""
    covered_of_addressable: float
    problems: list[ProblemCoverage]
    uncovered: list[Uncovered]
    problem_weights: dict[str, float]
    projection: ProjectionReport | None = None
    full_depth: FullDepth | None = None
    rules: dict

    def as_json(self) -> dict:
        return self.model_dump(mode="json")
