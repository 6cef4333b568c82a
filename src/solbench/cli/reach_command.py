"""`solbench reach`: how much of a model's step time suite kernels can move (docs/reach.md)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from solbench.cli.common import Device, UsageError


def reach(
    model: str | None = typer.Argument(
        None, help="A model record name (Llama-3.2-1B, Qwen3-0.6B ...), dlrm-dcnv2, or module:PATH.py:FACTORY."
    ),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    mode: str = typer.Option("inference", "--mode", help="inference or training."),
    batch: int | None = typer.Option(None, "--batch", help="Batch (default 1 for transformers, 2048 for DLRM)."),
    seq: int | None = typer.Option(None, "--seq", help="Sequence length of a transformers model (default 512)."),
    steps: int = typer.Option(5, "--steps", help="Profiled steady-state steps."),
    warmup: int = typer.Option(2, "--warmup", help="Unprofiled warm-up steps before them."),
    layers: int | None = typer.Option(
        None,
        "--layers",
        help="Decoder layers to keep (default 2 on the CPU, all on "
        "CUDA; 0 keeps all). Only depth is scaled, never width.",
    ),
    max_rows: int = typer.Option(100_000, "--max-rows", help="DLRM: embedding rows per table at most."),
    configs: Path | None = typer.Option(
        None, "--configs", help="model-configs.json (default the one solbench extract reads)."
    ),
    problems: Path | None = typer.Option(None, "--problems", help="Suite folder to map onto (default problems/)."),
    rules: Path | None = typer.Option(None, "--rules", help="JSON rules overriding the op classes (docs/reach.md)."),
    traces: Path | None = typer.Option(None, "--traces", help="Traces folder: per-problem speedups to project."),
    speedups: Path | None = typer.Option(None, "--speedups", help='Leaderboard export {"speedups": {...}}.'),
    assume_speedup: float | None = typer.Option(
        None, "--assume-speedup", help="Project every covered problem at this speedup."
    ),
    compare: list[Path] = typer.Option([], "--compare", help="Draw these reports side by side (with -o CHART)."),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
    out: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Write REPORT.json and its charts REPORT.png, REPORT.svg (with --compare: the chart).",
    ),
) -> None:
    """Profile a model's steady-state steps, split the time into vendor-tuned classes (GEMM, convolution,
    attention, collectives) and addressable ops, map the addressable time onto suite problems, and project
    the end-to-end gain of given speedups."""
    from solbench.reach import ModelRequest, ReachOptions, read_report, run_reach, write_report

    if compare:
        if model:
            raise UsageError("give a MODEL or --compare REPORT..., not both")
        if out is None:
            raise UsageError("--compare needs -o CHART.svg (or .png)")
        from solbench.reach.charts import draw_reports

        for path in draw_reports([read_report(p) for p in compare], out):
            print(path)
        return
    if not model:
        raise UsageError("give a MODEL (see --help) or --compare REPORT...")
    request = ModelRequest(
        model=model,
        mode=mode,
        device=_device(device),
        batch=batch,
        seq=seq,
        layers=layers,
        max_rows=max_rows,
        configs=configs,
    )
    options = ReachOptions(
        steps=steps,
        warmup=warmup,
        problems=problems,
        rules=rules,
        traces=traces,
        speedups_file=speedups,
        assume_speedup=assume_speedup,
    )
    report = run_reach(request, options)
    written = []
    if out is not None:
        from solbench.reach.charts import draw_reports

        written.append(write_report(report, out.with_suffix(".json")))
        written += draw_reports([report], out.with_suffix(".svg"))
    if json_output:
        print(json.dumps(report.as_json()))
        return
    from rich.console import Console

    console = Console()
    console.print(_tables(report))
    for path in written:
        console.print(f"wrote {path}")


def _tables(report):
    from rich.console import Group
    from rich.table import Table

    head = Table(
        title=f"{report.model} — {report.mode} on {report.device}: {report.steps} steps of "
        f"{report.step_ms:.1f} ± {report.step_ms_std:.1f} ms (profile {report.profile_seconds:.1f} s)"
    )
    for column in ("class", "ms/step", "share"):
        head.add_column(column, justify="left" if column == "class" else "right")
    for c in report.classes:
        if c.ms > 0:
            head.add_row(c.cls, f"{c.ms:.2f}", f"{100 * c.share:.1f}% ± {100 * c.share_std:.1f}")
    ops = Table(title="Top ops (self time)")
    for column in ("op", "class", "family", "pass", "width", "share", "match"):
        ops.add_column(column)
    for row in report.ops[:15]:
        ops.add_row(
            row.op, row.cls, row.family, row.pass_, str(row.width or ""), f"{100 * row.share:.1f}%", row.match or ""
        )
    covered = Table(
        title=f"Suite coverage: {100 * report.covered_fraction:.1f}% of the step "
        f"({100 * report.covered_of_addressable:.1f}% of addressable)"
    )
    for column in ("problem", "set", "op_type", "match", "share of step"):
        covered.add_column(column)
    for p in report.problems[:15]:
        covered.add_row(p.problem, p.set, p.op_type, p.match, f"{100 * p.share_of_step:.2f}%")
    for u in report.uncovered[:8]:
        covered.add_row(f"(no problem) {u.family}", "", "", u.pass_, f"{100 * u.share_of_step:.2f}%")
    parts = [
        head,
        f"addressable fraction {100 * report.addressable_fraction:.1f}% ± {100 * report.addressable_fraction_std:.1f}",
        ops,
        covered,
    ]
    if report.full_depth:
        f = report.full_depth
        parts.append(
            f"extrapolated to all {f.layers_published} layers (estimate): addressable fraction "
            f"{100 * f.addressable_fraction:.1f}%, vendor-tuned {100 * f.vendor_fraction:.1f}%"
        )
    if report.projection:
        p = report.projection
        parts.append(
            f"projected end-to-end gain {100 * p.gain:.2f}% (90% interval {100 * p.low:.2f}–"
            f"{100 * p.high:.2f}%) from {p.source}"
        )
    if report.scaling:
        parts.append("scaling: " + "; ".join(report.scaling))
    return Group(*parts)


def _device(device: Device | None) -> str:
    from solbench.evaluation.config import AUTO_DEVICE, resolve_device

    return resolve_device(device.value if device else AUTO_DEVICE)
