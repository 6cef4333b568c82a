"""What a fresh process's first `solbench sol` analysis costs beyond a warm one, side by side per problem.

A batch worker or a service request that analyses one problem per process pays, on its first analysis, what a
long-lived process pays once: torch's lazily imported parts (sympy behind its Python meta kernels, torch._dynamo),
first dispatches, and work whose result the cache folder keeps (the precision checks, each problem's recording
plan). This script runs the same problems both ways, with one cache folder of its own (so the user's is untouched
and both sides see the same cache):

- warm: one process analyses every problem twice; the first pass fills the cache folder and pays the process's
  one-time costs, the second pass gives each problem's warm seconds;
- cold: each problem in a fresh process, after the warm run (its cache folder as a worker's would be after the
  problem's first analysis anywhere): the seconds its imports take (torch, then what `solbench sol` imports)
  and the seconds of its first analysis.

It prints per problem the cold and warm analysis seconds, their difference, the cold process's import seconds
and whether its analysis imported torch._dynamo and sympy (torch's Python meta kernels import it on first use);
then the medians. Each analysis is `analyze_set` on one folder
on B200_1500MHz, as `solbench sol` runs it (errors such as missing data files count: they are what a user
meets too).

Usage: python benchmarks/sol_cold_start.py [--problems N] [--repeats R] [PROBLEM_DIR_OR_SET_ROOT ...]
(default: N problems spread over the bundled problems/ and examples/; give ../shared/sol-execbench-sample, say,
to measure that set instead)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ROOTS = [ROOT / "problems", ROOT / "examples"]
HARDWARE = "B200_1500MHz"


def problem_folders(paths: list[Path]) -> list[Path]:
    found = []
    for path in paths:
        if (path / "definition.json").is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(p.parent for p in path.rglob("definition.json")))
    return found


def spread(folders: list[Path], count: int) -> list[Path]:
    """`count` folders evenly spaced over the sorted list (the same ones on every run)."""
    if count >= len(folders):
        return folders
    step = len(folders) / count
    return [folders[int(i * step)] for i in range(count)]


def child(folders: list[Path], passes: int) -> None:
    """In this process: time the imports, then analyse the folders `passes` times; one JSON line per analysis."""
    started = time.perf_counter()
    import torch  # noqa: F401  (timed: every analysis needs it)

    torch_seconds = time.perf_counter() - started
    from solbench.hardware import lookup
    from solbench.sol.problem_set import analyze_set

    imports_seconds = time.perf_counter() - started
    hardware = lookup(HARDWARE)
    root = Path(os.path.commonpath([f.parent for f in folders]))
    for round_ in range(passes):
        for folder in folders:
            [analysis] = analyze_set([folder], root, hardware)
            record = {
                "folder": str(folder),
                "pass": round_,
                "seconds": analysis.seconds,
                "error": analysis.error,
                "torch_s": torch_seconds,
                "imports_s": imports_seconds,
                "dynamo": "torch._dynamo" in sys.modules,
                "sympy": "sympy" in sys.modules,
            }
            print(json.dumps(record), flush=True)


def run_child(folders: list[Path], passes: int, cache: str) -> tuple[list[dict], float]:
    """The child's records and the whole process's wall seconds."""
    environment = {**os.environ, "SOLBENCH_CACHE_DIR": cache}
    command = [sys.executable, __file__, "--child", "--passes", str(passes), *map(str, folders)]
    started = time.perf_counter()
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the child process failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")], wall


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--problems", type=int, default=12, help="how many of the bundled problems (default 12)")
    parser.add_argument("--repeats", type=int, default=1, help="fresh processes per problem (the median is kept)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--passes", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.paths, args.passes)
        return
    folders = problem_folders(args.paths) if args.paths else spread(problem_folders(DEFAULT_ROOTS), args.problems)
    if not folders:
        sys.exit("no problem folders found")
    with tempfile.TemporaryDirectory(prefix="solbench-cold-start-") as cache:
        warm_records, _ = run_child(folders, 2, cache)
        warm = {r["folder"]: r["seconds"] for r in warm_records if r["pass"] == 1}
        first_pass = [r["seconds"] for r in warm_records if r["pass"] == 0]
        cold: dict[str, list[dict]] = {}
        walls = []
        for _ in range(args.repeats):
            for folder in folders:
                [record], wall = run_child([folder], 1, cache)
                cold.setdefault(str(folder), []).append(record)
                walls.append(wall)
    print(f"{'problem':<60} {'cold s':>7} {'warm s':>7} {'cold-warm':>9} {'imports s':>9}  dynamo  sympy  status")
    extras, colds, imports = [], [], []
    for folder in folders:
        records = cold[str(folder)]
        cold_s = statistics.median(r["seconds"] for r in records)
        import_s = statistics.median(r["imports_s"] for r in records)
        extra = cold_s - warm[str(folder)]
        extras.append(extra)
        colds.append(cold_s)
        imports.append(import_s)
        error = records[0]["error"]
        status = f"error: {error[:60]}" if error else "ok"
        name = f"{folder.parent.name}/{folder.name}"
        print(
            f"{name[:60]:<60} {cold_s:7.3f} {warm[str(folder)]:7.3f} {extra:9.3f} {import_s:9.2f}  "
            f"{'yes' if any(r['dynamo'] for r in records) else 'no':>6}  "
            f"{'yes' if any(r['sympy'] for r in records) else 'no':>5}  {status}"
        )
    print()
    print(
        f"{len(folders)} problems, medians: cold {statistics.median(colds):.3f} s, warm "
        f"{statistics.median(warm.values()):.3f} s, cold - warm {statistics.median(extras):.3f} s "
        f"(largest {max(extras):.3f} s); a fresh process's imports {statistics.median(imports):.2f} s "
        f"(torch alone {statistics.median(r['torch_s'] for rs in cold.values() for r in rs):.2f} s); "
        f"whole cold process {statistics.median(walls):.2f} s; the warm process's first pass "
        f"{statistics.median(first_pass):.3f} s; the first analysis imported sympy in "
        f"{sum(any(r['sympy'] for r in rs) for rs in cold.values())} problem(s), torch._dynamo in "
        f"{sum(any(r['dynamo'] for r in rs) for rs in cold.values())}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
