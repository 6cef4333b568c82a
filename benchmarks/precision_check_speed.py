"""What the precision checks of `--precision tolerance` cost a first, uncached `solbench sol`, and what they decide.

For every problem folder under ../shared/sol-execbench-sample (or those given), in one process after a warm-up,
analyses the problem on B200_1500MHz with an empty cache (a temporary SOLBENCH_CACHE_DIR per analysis) under
`--precision strict` and under `--precision tolerance`, and prints the process's CPU seconds of each (wall
seconds too, which a machine shared with other work inflates more) and the checks' cost: the difference.

`--baseline FILE` also analyses each problem under `tolerance` with FILE standing in for sol/precision.py (say,
`git show main:src/solbench/sol/precision.py > /tmp/precision_before.py`; where FILE has no `problem_records`,
sol/problem_precision.py decides each problem's records with it), side by side in the same process, and
prints whether the admissible precision decided per workload is the same. `--repeat N` takes the least of N
analyses of each kind. `--decisions FILE` writes {problem: {workload uuid: precision, inferred marked *}} as JSON.

Usage: python benchmarks/precision_check_speed.py [--baseline FILE] [--repeat N] [--decisions FILE] [DIR ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "sol-execbench-sample"
MODULE = "solbench.sol.precision"
RECORDS = "solbench.sol.problem_precision"


def problem_folders(paths: list[Path]) -> list[Path]:
    found = []
    for path in paths:
        if (path / "definition.json").is_file():
            found.append(path)
        else:
            found.extend(sorted(p.parent for p in path.rglob("definition.json")))
    return found


def load_baseline(path: Path):
    """(FILE as a module object, the module deciding a problem's records with it): FILE itself where it holds
    `problem_records` (written before sol/problem_precision.py was split from it), else a fresh copy of
    problem_precision bound to FILE. Their cache keys differ from the current modules': the source differs."""
    precision = _module_from(MODULE, path)
    if hasattr(precision, "problem_records"):
        return precision, precision
    current = sys.modules[MODULE]
    sys.modules[MODULE] = precision
    try:
        return precision, _module_from(RECORDS, Path(sys.modules[RECORDS].__file__))
    finally:
        sys.modules[MODULE] = current


def _module_from(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    current = sys.modules[name]
    sys.modules[name] = module  # its own lazy imports see itself
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules[name] = current
    return module


def decisions(results) -> dict[str, str]:
    return {
        r.workload.uuid: r.precision.matrix_precision + ("*" if "inferred" in r.precision.basis else "")
        for r in results
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--decisions", type=Path)
    args = parser.parse_args(argv)

    import solbench.sol.precision
    import solbench.sol.problem_precision

    current = (solbench.sol.precision, solbench.sol.problem_precision)
    from solbench.errors import SolbenchError
    from solbench.hardware import lookup
    from solbench.sol import analyze_problem
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis

    folders = problem_folders(args.paths or [SAMPLE])
    if not folders:
        sys.exit(f"no problem folders found (expected {SAMPLE})")
    variants = {"current": current}
    if args.baseline:
        variants = {"baseline": load_baseline(args.baseline), **variants}
    hardware = lookup("B200_1500MHz")
    make_inputs = partial(inputs_for_analysis, data_roots=())

    def analyse(problem, policy: str, modules) -> tuple[list | None, float, float]:
        sys.modules[MODULE], sys.modules[RECORDS] = modules
        previous = os.environ.get("SOLBENCH_CACHE_DIR")
        with tempfile.TemporaryDirectory() as cache:
            os.environ["SOLBENCH_CACHE_DIR"] = cache
            start, cpu_start = time.perf_counter(), time.process_time()
            try:
                results = analyze_problem(problem, hardware, make_inputs=make_inputs, precision=policy)
            except SolbenchError:
                results = None
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        if previous is None:
            os.environ.pop("SOLBENCH_CACHE_DIR", None)
        else:
            os.environ["SOLBENCH_CACHE_DIR"] = previous
        sys.modules[MODULE], sys.modules[RECORDS] = current
        return results, seconds, cpu

    analyse(load_problem(folders[0]), "strict", current)  # warm-up: torch's first dispatches
    from torch._subclasses.fake_tensor import FakeTensorMode

    FakeTensorMode()  # its first construction imports torch._dynamo (seconds, once per process)
    kinds = [("strict", "strict", current)] + [(name, "tolerance", module) for name, module in variants.items()]
    header = " ".join(f"{name + ' cpu s':>16}" for name, _, _ in kinds)
    checks = " ".join(f"{'checks ' + name:>16}" for name in variants)
    print(f"{'problem':<52} {header} {checks}  {'wall s (same order)':<24} decided")
    written: dict[str, dict] = {}
    totals = {name: 0.0 for name, _, _ in kinds}
    for folder in folders:
        name = f"{folder.parent.name}/{folder.name}"
        problem = load_problem(folder)
        cpu: dict[str, float] = {}
        wall: dict[str, float] = {}
        decided: dict[str, dict | None] = {}
        for _ in range(args.repeat):
            for kind, policy, module in kinds:
                results, seconds, cpu_seconds = analyse(problem, policy, module)
                cpu[kind] = min(cpu.get(kind, float("inf")), cpu_seconds)
                wall[kind] = min(wall.get(kind, float("inf")), seconds)
                decided[kind] = decisions(results) if results is not None else None
        for kind in cpu:
            totals[kind] += cpu[kind]
        shown = decided["current"]
        summary = (
            "error"
            if shown is None
            else ", ".join(
                f"{precision} x{count}"
                for precision, count in sorted({p: list(shown.values()).count(p) for p in set(shown.values())}.items())
            )
        )
        if "baseline" in decided:
            summary += (
                "  (same as baseline)"
                if decided["baseline"] == shown
                else f"  DIFFERS from baseline: {decided['baseline']}"
            )
        written[name] = shown
        print(
            f"{name[:52]:<52} "
            + " ".join(f"{cpu[kind]:16.2f}" for kind, _, _ in kinds)
            + " "
            + " ".join(f"{cpu[v] - cpu['strict']:16.2f}" for v in variants)
            + "  "
            + f"{' / '.join(f'{wall[kind]:.2f}' for kind, _, _ in kinds):<24} {summary}",
            flush=True,
        )
    print("total CPU s: " + ", ".join(f"{kind} {seconds:.1f}" for kind, seconds in totals.items()))
    if args.decisions:
        args.decisions.write_text(json.dumps(written, indent=1, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
