"""Seconds per problem of `analyze_problem`, for comparing two versions of solbench side by side.

Uses only what every version since the analyzer's inputs came from the problem's generator has
(`load_problem`, `inputs_for_analysis`, `analyze_problem`), so an older checkout can run it too:

    git worktree add /tmp/before REV
    PYTHONPATH=/tmp/before/src python benchmarks/sol_side_by_side.py DIR ...   # before
    python benchmarks/sol_side_by_side.py DIR ...                              # after

Each problem is analysed twice in one process, each time with an empty cache (the precision checks
run both times); the second time is printed (the first carries one-time costs of the process). With
`--warm`, both analyses share one cache folder, so the second finds the first's precision checks and
recording plan, as any analysis after a problem's first does. Run the two versions alternately, more
than once, and compare the best: a shared machine's noise is tens of percent.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path


def main(argv: list[str]) -> None:
    from solbench.hardware import lookup
    from solbench.sol import analyze_problem
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis

    hardware = lookup("B200_1500MHz")
    make_inputs = partial(inputs_for_analysis, data_roots=())
    warm = "--warm" in argv
    folders = [Path(a) for a in argv if a != "--warm"]
    if not folders:
        sys.exit(__doc__)
    shared = tempfile.TemporaryDirectory()

    def seconds(folder: Path) -> float:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["SOLBENCH_CACHE_DIR"] = shared.name if warm else cache
            start = time.perf_counter()
            # the published workloads, as `solbench sol -H B200_1500MHz` reads them (not the folder's CPU tier)
            analyze_problem(load_problem(folder, device="cuda"), hardware, make_inputs=make_inputs)
            return time.perf_counter() - start

    for folder in folders:
        seconds(folder)
    print(" ".join(f"{folder.parent.name}/{folder.name[:3]} {seconds(folder):.2f}" for folder in folders), flush=True)
    shared.cleanup()


if __name__ == "__main__":
    main(sys.argv[1:])
