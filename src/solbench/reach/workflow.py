"""`solbench reach` as one library call: build, profile, classify, map to the suite, project."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from solbench.reach.attribution import Attribution, attribute
from solbench.reach.errors import ReachError
from solbench.reach.mapping import SuiteCoverage, cover
from solbench.reach.models import ModelRequest, build_model
from solbench.reach.profile import profile_model, spread
from solbench.reach.projection import project
from solbench.reach.report import (
    ClassTime,
    FullDepth,
    ProblemCoverage,
    ProjectionReport,
    ReachOpRow,
    ReachReport,
    SpeedupUsed,
    Uncovered,
)
from solbench.reach.rules import ADDRESSABLE, Rules, load_op_type_overrides, load_rules
from solbench.reach.speedups import assumed, speedups_from_export, speedups_from_traces
from solbench.reach.suite_index import load_suite

DEFAULT_PROBLEMS = Path(__file__).resolve().parents[3] / "problems"
"""The repository's problems/ folder."""
TOP_OPS = 40


@dataclass(frozen=True)
class ReachOptions:
    steps: int = 5
    warmup: int = 2
    problems: Path | None = None
    rules: Path | None = None
    rules_override: Rules | None = None
    """Python-level rules (take precedence over ``rules``)."""
    traces: Path | None = None
    speedups_file: Path | None = None
    assume_speedup: float | None = None


def run_reach(request: ModelRequest, options: ReachOptions = ReachOptions()) -> ReachReport:
    rules = options.rules_override or load_rules(options.rules)
    op_types = load_op_type_overrides(options.rules)
    problems_root = options.problems or DEFAULT_PROBLEMS
    suite = load_suite(problems_root)  # before the model: a bad folder fails fast
    begin = time.perf_counter()
    built = build_model(request)
    build_seconds = time.perf_counter() - begin
    profile = profile_model(built, steps=options.steps, warmup=options.warmup, device=request.device)
    attribution = attribute(profile, rules, built.module_families, built.depth)
    coverage = cover(attribution, suite, built.name, op_types)
    projection = _projection(attribution, coverage, options)
    return _report(request, built, profile, attribution, coverage, projection, rules, build_seconds, problems_root)


def _projection(attribution: Attribution, coverage: SuiteCoverage, options: ReachOptions) -> ProjectionReport | None:
    sources = [s for s in (options.traces, options.speedups_file, options.assume_speedup) if s is not None]
    if len(sources) > 1:
        raise ReachError("give one speedup source: --traces, --speedups or --assume-speedup")
    if not sources:
        return None
    if options.traces is not None:
        speedups, source = speedups_from_traces(options.traces), f"traces {options.traces}"
    elif options.speedups_file is not None:
        speedups, source = speedups_from_export(options.speedups_file), f"export {options.speedups_file}"
    else:
        assert options.assume_speedup is not None, "the one source given is neither of the others"
        speedups = assumed(list(coverage.problem_us), options.assume_speedup)
        source = f"assumed {options.assume_speedup:g}x for every covered problem"
    result = project(attribution.step_us, coverage.problem_us, speedups, source)
    return ProjectionReport(
        source=source,
        gain=result.gain,
        low=result.low,
        high=result.high,
        median=result.median,
        speedups=[
            SpeedupUsed(problem=p, speedup=s.mean, log_std=s.log_std, count=s.count, source=s.source)
            for p, s in sorted(result.speedups.items())
        ],
    )


def _mean_ms(series: list[float]) -> float:
    return statistics.fmean(series) / 1e3


def _report(
    request,
    built,
    profile,
    attribution: Attribution,
    coverage: SuiteCoverage,
    projection,
    rules: Rules,
    build_seconds: float,
    problems_root: Path,
) -> ReachReport:
    step_ms = _mean_ms(attribution.step_us)
    addressable = attribution.fraction(ADDRESSABLE)
    vendor = [sum(parts) for parts in zip(*(attribution.fraction(c) for c in attribution.vendor_classes()))] or [
        0.0
    ] * profile.steps
    classes = [
        ClassTime(
            cls=c,
            ms=_mean_ms(series),
            ms_std=spread(series) / 1e3,
            share=statistics.fmean(attribution.fraction(c)),
            share_std=spread(attribution.fraction(c)),
        )
        for c, series in attribution.classes.items()
    ]
    ops = []
    for key, series in sorted(attribution.groups.items(), key=lambda item: -sum(item[1]))[:TOP_OPS]:
        level, names = coverage.group_match.get(key, (None, ()))
        ops.append(
            ReachOpRow(
                op=key.op,
                cls=key.cls,
                family=key.family,
                pass_=key.pass_,
                width=key.width,
                ms=_mean_ms(series),
                share=_mean_ms(series) / step_ms,
                problems=list(names),
                match=level,
            )
        )
    addressable_ms = _mean_ms(attribution.classes[ADDRESSABLE]) or float("nan")
    covered = [
        ProblemCoverage(
            problem=name,
            set=coverage.problem_info[name].set,
            op_type=coverage.problem_info[name].op_type,
            match=coverage.problem_level[name],
            ms=_mean_ms(series),
            share_of_step=_mean_ms(series) / step_ms,
            share_of_addressable=_mean_ms(series) / addressable_ms,
        )
        for name, series in sorted(coverage.problem_us.items(), key=lambda item: -sum(item[1]))
    ]
    uncovered = [
        Uncovered(
            family=family,
            pass_=pass_,
            ms=_mean_ms(series),
            share_of_step=_mean_ms(series) / step_ms,
            share_of_addressable=_mean_ms(series) / addressable_ms,
        )
        for (family, pass_), series in sorted(coverage.uncovered_us.items(), key=lambda item: -sum(item[1]))
    ]
    covered_ms = sum(p.ms for p in covered)
    # like every share, the mean over steps of the per-step share (so it never exceeds the addressable one)
    covered_steps = [sum(series[i] for series in coverage.problem_us.values()) for i in range(profile.steps)]
    covered_fraction = statistics.fmean(c / s if s else 0.0 for c, s in zip(covered_steps, attribution.step_us))
    full_depth = None
    if attribution.full_depth is not None:
        totals = [sum(values[i] for values in attribution.full_depth.values()) for i in range(profile.steps)]
        fractions = {
            c: [v / t if t else 0.0 for v, t in zip(series, totals)] for c, series in attribution.full_depth.items()
        }
        vendor_full = [
            sum(fractions[c][i] for c in attribution.vendor_classes() if c in fractions) for i in range(profile.steps)
        ]
        full_depth = FullDepth(
            layers_kept=built.depth.kept,
            layers_published=built.depth.published,
            step_ms=statistics.fmean(totals) / 1e3,
            addressable_fraction=statistics.fmean(fractions[ADDRESSABLE]),
            addressable_fraction_std=spread(fractions[ADDRESSABLE]),
            vendor_fraction=statistics.fmean(vendor_full),
            shares={c: statistics.fmean(v) for c, v in fractions.items()},
        )
    return ReachReport(
        model=built.name,
        kind=built.kind,
        mode=request.mode,
        device=request.device,
        config=built.config,
        scaling=built.scaling,
        steps=profile.steps,
        warmup=profile.warmup,
        step_ms=step_ms,
        step_ms_std=spread(attribution.step_us) / 1e3,
        wall_ms=statistics.fmean(profile.wall_us) / 1e3,
        build_seconds=build_seconds,
        profile_seconds=profile.seconds,
        addressable_fraction=statistics.fmean(addressable),
        addressable_fraction_std=spread(addressable),
        vendor_fraction=statistics.fmean(vendor),
        vendor_fraction_std=spread(vendor),
        classes=classes,
        ops=ops,
        problems_root=str(problems_root),
        covered_fraction=covered_fraction,
        covered_of_addressable=covered_ms / addressable_ms if covered else 0.0,
        problems=covered,
        uncovered=uncovered,
        problem_weights={p.problem: p.share_of_addressable for p in covered},
        projection=projection,
        full_depth=full_depth,
        rules=rules.as_json(),
    )


def write_report(report: ReachReport, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.as_json(), indent=2) + "\n")
    return path


def read_report(path: Path) -> ReachReport:
    from pydantic import ValidationError

    try:
        return ReachReport.model_validate_json(Path(path).read_text())
    except FileNotFoundError:
        raise ReachError(f"reach report {path} does not exist") from None
    except (OSError, ValidationError, ValueError) as error:
        raise ReachError(f"{path} is not a solbench reach report: {str(error).splitlines()[0]}") from None
