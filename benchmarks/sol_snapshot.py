"""The analyzer's full output over many problems, written to JSON and compared with an earlier run.

A change meant only to make the speed-of-light analysis faster must leave every figure as it was:
T_SOL, FLOPs by class, compulsory bytes, coverage, execution and each op's row (`--explain`).
Run it before the change (`--write before.json`), after it (`--write after.json --compare
before.json`); it lists every problem whose output differs (or that now fails differently) and
exits 1 when any does (problems missing from either run are left out: the file is written after each
problem, so an interrupted run still compares). Errors are part of the output: a problem that failed before must fail
with the same message.

Usage: python benchmarks/sol_snapshot.py --write OUT.json [--compare OLD.json] [--tier gpu|cpu|all]
       [PROBLEM_DIR_OR_SET_ROOT ...]
(default: ../shared/sol-execbench-sample and problems/)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ROOTS = [ROOT.parent / "shared" / "sol-execbench-sample", ROOT / "problems"]


def problem_folders(paths: list[Path]) -> list[Path]:
    found = []
    for path in paths:
        if (path / "definition.json").is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(p.parent for p in path.rglob("definition.json")))
    return found


def snapshot(folders: list[Path], out: Path, tier: str | None = None) -> tuple[dict[str, object], dict[str, float]]:
    """Analyse each folder (explain on), writing everything so far to `out` after each one; `tier` as `load_problem`
    takes it (None: its default, the CPU tier where a folder has one and this machine has no GPU)."""
    from solbench.errors import SolbenchError
    from solbench.hardware import lookup
    from solbench.sol import analyze_problem
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis

    hardware = lookup("B200_1500MHz")
    make_inputs = partial(inputs_for_analysis, data_roots=())
    figures, seconds = {}, {}
    for folder in folders:
        key = f"{folder.parent.name}/{folder.name}"
        start = time.perf_counter()
        try:
            results = analyze_problem(load_problem(folder, tier), hardware, explain=True, make_inputs=make_inputs)
            figures[key] = [r.model_dump(mode="json") for r in results]
        except SolbenchError as error:
            figures[key] = {"error": str(error)}
        seconds[key] = time.perf_counter() - start
        print(f"{key[:70]:<70} {seconds[key]:7.2f} s", file=sys.stderr, flush=True)
        out.write_text(json.dumps({"figures": figures, "seconds": seconds}, indent=1, sort_keys=True))
    return figures, seconds


def differences(old: dict[str, object], new: dict[str, object]) -> list[str]:
    """Problems analysed in both runs whose output differs, with the first difference."""
    found = []
    for key in sorted(set(old) & set(new)):
        if old[key] != new[key]:
            found.append(f"{key}: {_first_difference(old[key], new[key])}")
    return found


def _first_difference(old, new, path: str = "") -> str:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            if old.get(key) != new.get(key):
                return _first_difference(old.get(key), new.get(key), f"{path}.{key}")
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return f"{path}: {len(old)} items before, {len(new)} now"
        for index, (a, b) in enumerate(zip(old, new)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
    return f"{path}: {str(old)[:200]!r} before, {str(new)[:200]!r} now"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, required=True)
    parser.add_argument("--compare", type=Path)
    parser.add_argument(
        "--tier",
        choices=("gpu", "cpu", "all"),
        help="workloads analysed (default: the CPU tier where a folder has one and there is no GPU)",
    )
    parser.add_argument("paths", nargs="*", type=Path)
    options = parser.parse_args(argv)
    folders = problem_folders(options.paths or DEFAULT_ROOTS)
    figures, seconds = snapshot(folders, options.write, options.tier)
    print(f"{len(folders)} problems in {sum(seconds.values()):.1f} s -> {options.write}")
    if options.compare is None:
        return 0
    before = json.loads(options.compare.read_text())
    found = differences(before["figures"], figures)
    for line in found:
        print(line)
    common = [key for key in seconds if key in before["seconds"]]
    print(
        f"{len(found)} of the {len(common)} problems analysed in both runs differ; analysis time "
        f"{sum(before['seconds'][k] for k in common):.1f} s "
        f"before, {sum(seconds[k] for k in common):.1f} s now"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
