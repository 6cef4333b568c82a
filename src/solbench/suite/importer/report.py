"""The import report: problems and workloads per set, and every note grouped by kind (import-report.json)."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict

REPORT_FILE = "import-report.json"
BASELINES_FILE = "baselines.json"

KINDS = {
    "unknown-axis": "a workload sets an axis its definition does not declare: ignored, as upstream does",
    "unknown-input": "a workload describes an input its definition does not have: ignored, as upstream does",
    "ignored-field": "a field upstream's schema does not read: ignored, as upstream does (its default applies)",
    "missing-data": "safetensors inputs not on disk (FlashInfer trace files): fetch them or pass --data-root",
    "published-figures": "published figures present but not usable for this problem",
    "name-clash": "two problems share a definition name: baselines and traces cannot tell them apart",
    "unknown-subset": "a subset solbench has no set name for: kept under its own name",
    "load-error": "the imported folder does not load (solbench refuses it): fix the source or report it",
    "no-cpu-tier": "no CPU tier (workload.cpu.jsonl): none needed (the published workloads are small) or none could "
    "be derived (the reason says which); where they are small, the published workloads serve `--tier cpu`",
    "cpu-tier-adjusted": "the reference disagreed with the definition on derived CPU-tier workloads: derived again "
    "keeping the published relations of the axes, or dropped",
}
"""Every kind of note, with what it means for the imported problem."""


class _Value(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ImportNote(_Value):
    kind: str
    """One of KINDS."""
    problem: str
    """``set/folder`` of the imported problem."""
    file: str
    """The written file the note is about (definition.json, workload.jsonl, metadata.json)."""
    lines: list[int] = []
    """Its lines (workload.jsonl: one workload a line, in the source's order)."""
    field: str | None = None
    """The field at issue, dotted (``tolerance.required_match_ratio``)."""
    message: str
    source: str = ""
    """Where the problem was read (``data/L2.parquet row 1`` or the source folder)."""


class SetCount(_Value):
    set: str
    """solbench's set name (FIB for FlashInfer-Bench)."""
    subset: str
    """The data set's subset name."""
    problems: int
    workloads: int
    published_workloads: int = 0
    """Workloads with published figures written to baselines.json."""


class ImportReport(_Value):
    source: str
    output: str
    revision: str | None = None
    """The data set's revision where known (from fetch, or the folders' metadata.json)."""
    sets: list[SetCount]
    problems: int
    workloads: int
    baselines_file: str | None = None
    """DIR/baselines.json where published figures were found; None without any."""
    notes: list[ImportNote] = []

    @property
    def loaded(self) -> int:
        return self.problems - len({n.problem for n in self.notes if n.kind == "load-error"})

    def kinds(self) -> dict[str, int]:
        """Notes per kind, most frequent first."""
        return dict(Counter(n.kind for n in self.notes).most_common())

    def notes_of(self, kind: str) -> list[ImportNote]:
        return [n for n in self.notes if n.kind == kind]

    def as_json(self) -> dict:
        return {**self.model_dump(mode="json"), "loaded": self.loaded, "kinds": self.kinds()}
