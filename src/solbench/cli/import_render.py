"""Rendering an import report (suite import / suite fetch): counts per set, then notes grouped by kind."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

EXAMPLES = 5
"""Notes shown per kind; the rest are in import-report.json."""


def import_tables(report) -> Group:
    summary = Text(
        f"imported {report.problems} problems ({report.workloads} workloads) from {report.source} into "
        f"{report.output}; {report.loaded} load" + (f"; revision {report.revision}" if report.revision else "")
    )
    sets = Table(title="per set", title_justify="left")
    for column in ("set", "upstream subset", "problems", "workloads", "published figures"):
        sets.add_column(column, justify="left" if column in ("set", "upstream subset") else "right")
    for item in report.sets:
        sets.add_row(item.set, item.subset, str(item.problems), str(item.workloads), str(item.published_workloads))
    parts: list = [summary, sets]
    from solbench.suite.importer.report import KINDS

    for kind, count in report.kinds().items():
        parts.append(Text(f"{kind} ({count}): {KINDS.get(kind, '')}", style="bold"))
        notes = report.notes_of(kind)
        for note in notes[:EXAMPLES]:
            where = note.file + (f":{_ranges(note.lines)}" if note.lines else "")
            field = f" {note.field}:" if note.field else ""
            parts.append(Text(f"  {where}:{field} {note.message}"))
        if len(notes) > EXAMPLES:
            parts.append(Text(f"  … and {len(notes) - EXAMPLES} more in import-report.json", style="dim"))
    written = [f for f in (report.baselines_file,) if f]
    parts.append(Text("wrote " + ", ".join(written + [f"{report.output}/import-report.json"]), style="dim"))
    return Group(*parts)


def _ranges(lines: list[int]) -> str:
    from solbench.spec.load_notes import line_ranges

    return line_ranges(tuple(lines))
