"""How long `solbench sol` takes per SOL-ExecBench problem, in-process, and how its T_SOL compares
with the published one.

Analyses every problem folder under ../shared/sol-execbench-sample (or the folders given) twice in one
process, each pass with an empty cache (so the precision checks run in both), with the analyzer's own
input generator, on B200_1500MHz. The first pass is what a fresh process meets: one-time costs (torch's
first dispatches, torch._dynamo, which some meta kernels import on first use) land on whichever problem
meets them first. The second pass is each problem's own cost. Prints one line per problem: seconds in
the first pass, then in the second (wall clock, and the process's CPU time, which a machine shared with
other work inflates less), workloads, coverage, and the median ratio of solbench's T_SOL to the published
`sol_ms` where the folder carries one (`metadata.json`).

Usage: python benchmarks/sol_sample_speed.py [PROBLEM_DIR_OR_SET_ROOT ...]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from functools import partial
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
    from solbench.errors import SolbenchError
    from solbench.hardware import lookup
    from solbench.sol import analyze_problem
    from solbench.sol.published import compare, published_sol
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis

    folders = problem_folders([Path(a) for a in argv] or [SAMPLE])
    if not folders:
        sys.exit(f"no problem folders found (expected {SAMPLE})")
    hardware = lookup("B200_1500MHz")
    make_inputs = partial(inputs_for_analysis, data_roots=())

    def timed(problem):
        """(wall s, CPU s, results, status) of one analysis, with a cache of its own."""
        with tempfile.TemporaryDirectory() as cache, _environment(CACHE_DIR_VARIABLE, cache):
            start, cpu_start = time.perf_counter(), time.process_time()
            try:
                results = analyze_problem(problem, hardware, make_inputs=make_inputs)
                status = "full" if all(r.coverage.full for r in results) else "partial coverage"
            except SolbenchError as error:
                results, status = [], f"error: {str(error)[:150]}"
            return time.perf_counter() - start, time.process_time() - cpu_start, results, status

    problems = [load_problem(folder) for folder in folders]
    first = [timed(problem)[0] for problem in problems]
    times, cpu_times, ratios, classes = [], [], [], Counter()
    print(f"{'problem':<64} {'first s':>7} {'s':>7} {'cpu s':>7} {'wl':>3} {'s/wl':>6}  {'ratio':>7} {'in [0.5,2]':>10}  "
          "status; main class of disagreement")
    for folder, problem, first_seconds in zip(folders, problems, first):
        name = f"{folder.parent.name}/{folder.name}"
        seconds, cpu_seconds, results, status = timed(problem)
        times.append(seconds)
        cpu_times.append(cpu_seconds)
        published = published_sol(problem)
        median, inside, main = "-", "-", ""
        if results and published:
            found = [c.ratio for c in compare(results, published) if c.ratio is not None]
            ratios.extend(found)
            median = f"{statistics.median(found):.3g}" if found else "-"
            inside = f"{sum(1 for r in found if 0.5 <= r <= 2)}/{len(found)}"
            why = Counter(r.published.disagreement.split(":")[0] for r in results
                          if r.published is not None and r.published.disagreement)
            classes.update(why)
            main = f"; {why.most_common(1)[0][0]}" if why else ""
        print(f"{name[:64]:<64} {first_seconds:7.2f} {seconds:7.2f} {cpu_seconds:7.2f} {len(problem.workloads):3d} "
              f"{seconds / len(problem.workloads):6.3f}  {median:>7} {inside:>10}  {status}{main}", flush=True)
    print()
    for label, values in (("first pass, wall", first), ("wall", times), ("CPU", cpu_times)):
        ordered = sorted(values)
        print(f"{len(folders)} problems, {label} seconds: median {statistics.median(values):.2f} s, "
              f"90th percentile {ordered[int(0.9 * (len(ordered) - 1))]:.2f} s, slowest {max(values):.2f} s, "
              f"total {sum(values):.1f} s")
    if ratios:
        inside = sum(1 for r in ratios if 0.5 <= r <= 2) / len(ratios)
        print(f"T_SOL / published over {len(ratios)} workloads: median {statistics.median(ratios):.3g}, "
              f"{inside:.0%} within [0.5, 2]")
        print("classes of disagreement (workloads): " + ", ".join(f"{name} {count}" for name, count in
                                                               classes.most_common()))


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
