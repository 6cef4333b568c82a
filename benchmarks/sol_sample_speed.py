"""How long `solbench sol` takes per SOL-ExecBench problem, in-process, and how its T_SOL compares
with the published one.

Analyses every problem folder under ../shared/sol-execbench-sample (or the folders given) twice in one
process, each pass with an empty cache (so the precision checks run in both), with the analyzer's own
input generator, on B200_1500MHz. The first pass is what a fresh process meets: one-time costs (torch's
first dispatches, sympy, which meta kernels import on first use, torch._dynamo, which fake tensors import)
land on whichever problem meets them first. The second pass is each problem's own cost. Prints one line per
problem: seconds in the first pass, then in the second (wall clock, and the process's CPU time, which a machine
shared with other work inflates less), workloads, coverage, and the median ratio of solbench's T_SOL to the published
`sol_ms` where the folder carries one (`metadata.json`).

Usage: python benchmarks/sol_sample_speed.py [PROBLEM_DIR_OR_SET_ROOT ...]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "sol-execbench-sample"


def problem_folders(paths: list[Path]) -> list[Path]:
    found = []
    for path in paths:
        if (path / "definition.json").is_file():
            found.append(path)
        else:
            found.extend(sorted(p.parent for p in path.rglob("definition.json")))
    return found


def main(argv: list[str]) -> None:
    from solbench.cache_dir import CACHE_DIR_VARIABLE
    from solbench.cli.render import set_summary_lines
    from solbench.hardware import lookup
    from solbench.sol.problem_set import analyze_set, percentile, summarize

    folders = problem_folders([Path(a) for a in argv] or [SAMPLE])
    if not folders:
        sys.exit(f"no problem folders found (expected {SAMPLE})")
    root = Path(os.path.commonpath([f.parent for f in folders]))
    hardware = lookup("B200_1500MHz")

    def timed(folder: Path):
        """(the analysis, CPU s) of one problem folder, with a cache of its own."""
        with tempfile.TemporaryDirectory() as cache, _environment(CACHE_DIR_VARIABLE, cache):
            cpu_start = time.process_time()
            [analysis] = analyze_set([folder], root, hardware)
            return analysis, time.process_time() - cpu_start

    first = [timed(folder)[0].seconds for folder in folders]
    analyses, cpu_times = [], []
    print(
        f"{'problem':<64} {'first s':>7} {'s':>7} {'cpu s':>7} {'wl':>3} {'s/wl':>6}  {'ratio':>7} {'in [0.5,2]':>10}  "
        "status; main class of disagreement"
    )
    for folder, first_seconds in zip(folders, first):
        analysis, cpu_seconds = timed(folder)
        analyses.append(analysis)
        cpu_times.append(cpu_seconds)
        results, ratios = analysis.workloads, analysis.ratios
        status = (
            f"error: {analysis.error[:150]}"
            if analysis.error
            else "full"
            if all(r.coverage.full for r in results)
            else "partial coverage"
        )
        median = f"{statistics.median(ratios):.3g}" if ratios else "-"
        inside = f"{analysis.agreeing}/{len(ratios)}" if ratios else "-"
        why = summarize([analysis]).disagreements
        main = f"; {next(iter(why))}" if why else ""
        count = max(len(results), 1)
        print(
            f"{analysis.folder[:64]:<64} {first_seconds:7.2f} {analysis.seconds:7.2f} {cpu_seconds:7.2f} "
            f"{len(results):3d} {analysis.seconds / count:6.3f}  {median:>7} {inside:>10}  {status}{main}",
            flush=True,
        )
    print()
    for label, values in (("first pass, wall", first), ("CPU", cpu_times)):
        print(
            f"{len(folders)} problems, {label} seconds: median {statistics.median(values):.2f} s, "
            f"90th percentile {percentile(values, 0.9):.2f} s, slowest {max(values):.2f} s, "
            f"total {sum(values):.1f} s"
        )
    for line in set_summary_lines(summarize(analyses), "on B200_1500MHz in the second pass"):
        print(line)


@contextmanager
def _environment(name: str, value: str):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


if __name__ == "__main__":
    main(sys.argv[1:])
