"""A report's summary table as Markdown (docs/reach.md shows these for the bundled models)."""

from __future__ import annotations

from solbench.reach.report import ReachReport


def summary_markdown(report: ReachReport, top: int = 6) -> str:
    shares = {c.cls: c for c in report.classes}
    lines = [
        f"**{report.model}** ({report.mode}, {report.device}; {report.steps} steps of "
        f"{report.step_ms:.1f} ± {report.step_ms_std:.1f} ms; profile {report.profile_seconds:.1f} s)",
        "",
        "| class | ms / step | share |",
        "|---|---:|---:|",
    ]
    for name in ("gemm", "attention", "convolution", "collective", "addressable", "framework", "unattributed"):
        c = shares.get(name)
        if c is not None and c.ms > 0:
            lines.append(f"| {name} | {c.ms:.1f} | {100 * c.share:.1f} % ± {100 * c.share_std:.1f} |")
    lines += [
        "",
        f"Addressable fraction **{100 * report.addressable_fraction:.1f} % ± "
        f"{100 * report.addressable_fraction_std:.1f}**; covered by suite problems "
        f"{100 * report.covered_fraction:.1f} % of the step.",
        "",
    ]
    if report.full_depth:
        f = report.full_depth
        lines[-1:-1] = [
            f"Extrapolated to all {f.layers_published} layers (estimate from the "
            f"{f.layers_kept} profiled): addressable **{100 * f.addressable_fraction:.1f} %**, "
            f"vendor-tuned {100 * f.vendor_fraction:.1f} %.",
            "",
        ]
    families: dict[str, float] = {}
    for row in report.ops:
        if row.cls == "addressable":
            key = f"{row.family} ({row.pass_})"
            families[key] = families.get(key, 0.0) + row.share
    if families:
        lines += ["| addressable family | share of step |", "|---|---:|"]
        for key, share in sorted(families.items(), key=lambda item: -item[1])[:top]:
            lines.append(f"| {key} | {100 * share:.1f} % |")
    if report.scaling:
        lines += ["", "Scaling: " + "; ".join(report.scaling) + "."]
    return "\n".join(lines)
