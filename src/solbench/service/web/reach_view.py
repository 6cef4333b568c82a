"""The reach section of the problem and set pages: which models' time the problem (or set) covers.

Reports come from the settings' ``reach_dir`` (files written by ``solbench reach -o``); the chart is the
reach layer's own (time by class, addressable fraction), inlined as SVG. Without a folder, without
reports, or without matplotlib the section is left out rather than failing the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ReachRow:
    model: str
    mode: str
    addressable_fraction: float
    share_of_addressable: float
    """Of the model's addressable time, the share this problem (or the set's problems) covers."""
    share_of_step: float


@dataclass(frozen=True)
class ReachSection:
    rows: list[ReachRow]
    chart: str | None


def _reports(folder: Path | None) -> list:
    if folder is None or not Path(folder).is_dir():
        return []
    from solbench.reach import ReachError, read_report

    reports = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            reports.append(read_report(path))
        except ReachError:
            continue  # another kind of JSON in the folder
    return reports


def reach_section(folder: Path | None, problems: set[str]) -> ReachSection | None:
    """Rows for the reports that map time onto any of ``problems``, and their chart; None when none does."""
    rows, shown = [], []
    for report in _reports(folder):
        covering = [p for p in report.problems if p.problem in problems]
        if not covering:
            continue
        shown.append(report)
        rows.append(
            ReachRow(
                model=report.model,
                mode=report.mode,
                addressable_fraction=report.addressable_fraction,
                share_of_addressable=sum(p.share_of_addressable for p in covering),
                share_of_step=sum(p.share_of_step for p in covering),
            )
        )
    if not rows:
        return None
    from solbench.reach import ReachError

    try:
        from solbench.reach.charts import chart_svg

        chart = chart_svg(shown)
    except ReachError:  # matplotlib is not installed: the table alone
        chart = None
    except Exception:
        chart = None
    return ReachSection(rows=rows, chart=chart)
