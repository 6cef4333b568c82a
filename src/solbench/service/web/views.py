"""What each page template receives: small frozen values, filled from the query module by `pages.py`.

The templates read only these, so a page can be rendered (and tested) from values alone, and the
database schema can change without touching a template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from solbench.service.hacked import Hacked
from solbench.service.worker_hardware import HardwareFigures
from solbench.spec.solution import SourceFile

DEFAULT_PER_PAGE = 50


@dataclass(frozen=True)
class Pagination:
    """One page of a long list: 1-based `page`, `per_page` rows, `total` rows in all."""

    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def pagination(page: int, per_page: int, total: int) -> Pagination:
    """Clamps a requested page into [1, pages], so a stale link past the end shows the last page."""
    per_page = max(1, min(per_page, 500))
    pages = max(1, -(-total // per_page))
    return Pagination(page=max(1, min(page, pages)), per_page=per_page, total=total)


@dataclass(frozen=True)
class SetCard:
    """A set as the home and set pages show it: title, counts, freeze date and its leader."""

    name: str
    title: str
    problems: int
    submissions: int
    frozen_at: datetime | None
    leader: str | None = None
    leader_score: float | None = None


@dataclass(frozen=True)
class FirstRow:
    """A submission that took the best score of its problem when it was scored."""

    when: datetime
    user: str
    set: str
    problem: str
    score: float
    previous_score: float | None
    submission_id: int


@dataclass(frozen=True)
class LeaderRow:
    rank: int
    user: str
    score: float
    problems_solved: int
    problems_total: int


@dataclass(frozen=True)
class ProblemLink:
    name: str
    ranked_users: int
    workloads: int
    best_score: float | None = None
    best_user: str | None = None


@dataclass(frozen=True)
class WorkloadRow:
    """A public workload of a problem with the two times its score is measured against."""

    uuid: str
    axes: dict[str, int]
    t_sol_ms: float | None
    t_baseline_ms: float | None
    bound: str | None = None


@dataclass(frozen=True)
class RankRow:
    rank: int
    user: str
    submission_id: int
    score: float
    submitted_at: datetime
    harness_version: str
    hardware: str


@dataclass(frozen=True)
class SubmissionRow:
    id: int
    user: str
    set: str
    problem: str
    mode: str
    status: str
    score: float | None
    submitted_at: datetime


@dataclass(frozen=True)
class WorkloadResultRow:
    """One trace of a submission: status, T_k against T_SOL and T_b, and the sample spread."""

    uuid: str
    status: str
    score: float | None
    latency_ms: float | None
    t_sol_ms: float | None
    t_baseline_ms: float | None
    min_ms: float | None = None
    median_ms: float | None = None
    max_ms: float | None = None
    failure: str | None = None
    held_out: bool = False


@dataclass(frozen=True)
class FindingRow:
    rule: str
    severity: str
    location: str
    message: str


@dataclass(frozen=True)
class ScoreHistoryRow:
    """The score of a submission under one harness release (a rescore adds a row)."""

    harness_version: str
    score: float | None
    scored_at: datetime
    note: str = ""


@dataclass(frozen=True)
class WorkerRow:
    name: str
    hardware: str
    device: str
    last_seen: datetime | None
    state: str
    current_submission: int | None = None
    evaluations: int = 0
    figures: HardwareFigures | None = None


@dataclass(frozen=True)
class HardwareRow:
    id: str
    name: str
    workers: int
    memory_bandwidth_bytes_per_s: float | None = None
    bfloat16_flops_per_s: float | None = None
    float32_flops_per_s: float | None = None
    source: str = ""
    """Where the figures come from: the workers' own report, or the server's hardware database."""


@dataclass(frozen=True)
class SubmissionDetail:
    id: int
    user: str
    set: str
    problem: str
    solution: str
    mode: str
    status: str
    verdict: str
    score: float | None
    """S as stored, the one that ranks: the mean over every workload it ran, public and held-out alike."""
    submitted_at: datetime
    finished_at: datetime | None
    hardware: str
    harness_version: str | None
    workloads: list[WorkloadResultRow]
    findings: list[FindingRow]
    history: list[ScoreHistoryRow] = field(default_factory=list)
    sources: list[SourceFile] | None = None
    code_note: str = ""
    """Why the code is not shown (set not frozen yet), or empty when it is."""
    private: bool = False
    public_score: float | None = None
    """S over the public workloads: the mean of the `workloads` rows' S (a failed one counting 0)."""
    held_out_score: float | None = None
    """S over the held-out workloads, whose rows no reader sees (they would reveal the hidden workloads)."""
    held_out_workloads: int = 0
    hacked: Hacked | None = None
    """Why it is off the boards; only its author and admins reach a hacked submission's page."""
