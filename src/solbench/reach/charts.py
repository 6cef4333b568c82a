"""Pictures of reach reports (matplotlib, imported only when drawing; ``pip install 'solbench[reach]'``).

- time by class: one stacked bar per model, its step split into the vendor classes, addressable
  time (covered by suite problems and not) and framework overhead, as shares of the step;
- addressable fractions: the addressable fraction of several models side by side, with the spread
  over the profiled steps as error bars and, for depth-scaled decoders, the full-depth estimate.
Both are drawn on one figure by ``draw_reports``; the format follows the file's suffix (.png or .svg).
Figures are made with matplotlib's object API, never pyplot: pyplot keeps global state (the current figure,
the backend), and the service draws charts from several threads at once.
"""

from __future__ import annotations

from pathlib import Path

from solbench.reach.errors import ReachError
from solbench.reach.report import ReachReport

COLOURS = {
    "gemm": "#4e79a7",
    "attention": "#76b7b2",
    "convolution": "#59a14f",
    "collective": "#b07aa1",
    "addressable (covered)": "#e15759",
    "addressable (uncovered)": "#f28e2b",
    "framework": "#bab0ac",
    "unattributed": "#d7d7d7",
}


def _new_figure(**options):
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ReachError("charts need matplotlib: pip install 'solbench[reach]'") from error
    return Figure(**options)


def label(report: ReachReport) -> str:
    """The bar's label; a `$` is escaped, else matplotlib would read what follows as mathtext (and fail on it)."""
    return f"{report.model}\n({report.mode})".replace("$", r"\$")


def class_shares(report: ReachReport) -> dict[str, float]:
    """Stacked-bar segments: vendor classes, addressable split by coverage, overhead (shares of the step)."""
    shares = {c.cls: c.share for c in report.classes}
    covered = min(report.covered_fraction, shares.get("addressable", 0.0))
    segments = {name: shares.get(name, 0.0) for name in ("gemm", "attention", "convolution", "collective")}
    segments["addressable (covered)"] = covered
    segments["addressable (uncovered)"] = shares.get("addressable", 0.0) - covered
    segments["framework"] = shares.get("framework", 0.0)
    segments["unattributed"] = shares.get("unattributed", 0.0)
    return segments


def draw_reports(reports: list[ReachReport], path: Path) -> list[Path]:
    """Both charts for ``reports`` into ``path`` (and its twin: a .png also gets a .svg and vice versa)."""
    path = Path(path)
    if path.suffix not in (".png", ".svg"):
        raise ReachError(f"{path}: a chart is written as .png or .svg")
    figure = _figure(reports)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        target = path.with_suffix(suffix)
        figure.savefig(target, dpi=120, metadata={"Date": None} if suffix == ".svg" else None)
        written.append(target)
    return written


def chart_svg(reports: list[ReachReport]) -> str:
    """Both charts as one inline SVG element (no XML prolog), for a web page."""
    import io

    buffer = io.StringIO()
    _figure(reports).savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _figure(reports: list[ReachReport]):
    if not reports:
        raise ReachError("no reach reports to draw")
    names = [label(r) for r in reports]
    figure = _new_figure(figsize=(6 + 1.6 * len(reports), 4.8))
    bars, fractions = figure.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    bottoms = [0.0] * len(reports)
    for segment, colour in COLOURS.items():
        values = [class_shares(r)[segment] * 100 for r in reports]
        if not any(values):
            continue
        bars.bar(names, values, bottom=bottoms, color=colour, label=segment, width=0.6)
        bottoms = [b + v for b, v in zip(bottoms, values)]
    bars.set_ylabel("share of step time (%)")
    bars.set_title("Step time by class")
    bars.set_ylim(0, 100)
    bars.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, frameon=False)
    values = [r.addressable_fraction * 100 for r in reports]
    errors = [r.addressable_fraction_std * 100 for r in reports]
    fractions.bar(names, values, yerr=errors, color=COLOURS["addressable (covered)"], capsize=4, width=0.6)
    for x, (value, error) in enumerate(zip(values, errors)):
        fractions.text(x, value + error + 1.5, f"{value:.1f}%", ha="center", fontsize=8)
    full = [(x, r.full_depth.addressable_fraction * 100) for x, r in enumerate(reports) if r.full_depth]
    if full:
        fractions.scatter(
            [x for x, _ in full],
            [v for _, v in full],
            marker="D",
            color="black",
            zorder=3,
            s=18,
            label="extrapolated to full depth",
        )
        fractions.legend(fontsize=7, loc="upper left", frameon=False)
    fractions.set_ylabel("addressable fraction (%)")
    fractions.set_title("Addressable fraction")
    fractions.set_ylim(0, max(100.0, max(values) + 10))
    for axes in (bars, fractions):
        axes.tick_params(axis="x", labelsize=7)
    figure.tight_layout()
    return figure
