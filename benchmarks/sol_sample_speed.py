"""How long `solbench sol` takes per SOL-ExecBench problem, in-process, and how its T_SOL compares
with the published one.

Analyses every problem folder under ../shared/sol-execbench-sample (or the folders given), each
once after a warm-up analysis of the first (torch's import, torch._dynamo's and the first dispatch excluded: once per process), with
the analyzer's own input generator, on B200_1500MHz. Prints one line per problem: seconds (wall
clock, and the process's CPU time, which a machine shared with other work inflates less), workloads, coverage, and the median ratio of solbench's T_SOL to the published `sol_ms` where the
folder carries one (`metadata.json`).

Usage: python benchmarks/sol_sample_speed.py [PROBLEM_DIR_OR_SET_ROOT ...]
"""

from __future__ import annotations

import statistics
from collections import Counter
import sys
import time
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
    try:
        analyze_problem(load_problem(folders[0]), hardware, make_inputs=make_inputs)  # warm-up
    except SolbenchError:
        pass
    from torch._subclasses.fake_tensor import FakeTensorMode

    FakeTensorMode()  # its first construction imports torch._dynamo (seconds, once per process)
    import torch._dynamo  # noqa: F401  (the rest of it: some meta kernels, cumsum's, import it on first use)
    times, cpu_times, ratios, classes = [], [], [], Counter()
    print(f"{'problem':<64} {'s':>7} {'cpu s':>7} {'wl':>3} {'s/wl':>6}  {'ratio':>7} {'in [0.5,2]':>10}  status; "
          "main class of disagreement")
    for folder in folders:
        name = f"{folder.parent.name}/{folder.name}"
        problem = load_problem(folder)
        start, cpu_start = time.perf_counter(), time.process_time()
        try:
            results = analyze_problem(problem, hardware, make_inputs=make_inputs)
            status = "full" if all(r.coverage.full for r in results) else "partial coverage"
        except SolbenchError as error:
            results, status = [], f"error: {str(error)[:150]}"
        seconds = time.perf_counter() - start
        times.append(seconds)
        cpu_times.append(time.process_time() - cpu_start)
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
        print(f"{name[:64]:<64} {seconds:7.2f} {cpu_times[-1]:7.2f} {len(problem.workloads):3d} {seconds / len(problem.workloads):6.3f}"
              f"  {median:>7} {inside:>10}  {status}{main}", flush=True)
    print()
    for label, values in (("wall", times), ("CPU", cpu_times)):
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


if __name__ == "__main__":
    main(sys.argv[1:])
