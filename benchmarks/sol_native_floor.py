"""How far `analyze_problem` is from the floor its own method sets: the reference run natively.

Where a reference's work is sized by routing values (an MoE layer's loop over experts), the analysis runs the
problem's input generator and the reference's integer work for real, once per workload and input draw, and costs
the floating-point work from shapes. Its floor is therefore the time those runs take natively. For a problem whose
floating-point sizes are constant axes (hidden and expert sizes), that floor is measured here by running the
generator and the reference natively on the CPU with those axes shrunk (`--shrink hidden_size=8`): the integer
work (routing tables drawn token by token, one `torch.where` per expert) is what the problem writes, and the
floating-point work left is negligible. Both run on one intra-op thread, as the analysis runs its real ops.

    python benchmarks/sol_native_floor.py SAMPLE/L1/044* --shrink hidden_size=8 intermediate_size=8
    python benchmarks/sol_native_floor.py SAMPLE/L2/065* --shrink hidden_size=8 intermediate_size=8

Prints, per problem: the analysis (the second in the process, with the first's cache folder, as `solbench sol`
over a set runs after its first problem), the native floor over the same workloads and input draws (draws read
from each result's `execution`), and their ratio.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
import time
from functools import partial
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="+", type=Path)
    parser.add_argument("--shrink", nargs="+", default=[], metavar="AXIS=SIZE", help="constant axes to shrink")
    options = parser.parse_args()
    shrink = {name: int(size) for name, size in (item.split("=") for item in options.shrink)}
    for folder in options.problems:
        analysis_s, draws = _analysis(folder)
        floor_s = _native(folder, shrink, draws)
        print(
            f"{folder.parent.name}/{folder.name[:3]}: analysis {analysis_s:.2f} s, native run of generator and "
            f"reference with {shrink or 'no axes'} shrunk {floor_s:.2f} s ({sum(draws.values())} runs), "
            f"ratio {analysis_s / floor_s:.2f}",
            flush=True,
        )


def _analysis(folder: Path) -> tuple[float, dict[str, int]]:
    """Seconds of a warm analysis, and the input draws it made per workload uuid."""
    from solbench.hardware import lookup
    from solbench.sol import analyze_problem
    from solbench.spec import load_problem
    from solbench.spec.inputs import inputs_for_analysis

    cache = tempfile.mkdtemp()
    os.environ["SOLBENCH_CACHE_DIR"] = cache
    make_inputs = partial(inputs_for_analysis, data_roots=())
    hardware = lookup("B200_1500MHz")
    try:
        analyze_problem(load_problem(folder, device="cuda"), hardware, make_inputs=make_inputs)
        start = time.perf_counter()
        results = analyze_problem(load_problem(folder, device="cuda"), hardware, make_inputs=make_inputs)
        seconds = time.perf_counter() - start
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return seconds, {result.workload.uuid: _draws(result.coverage.execution) for result in results}


def _draws(execution: str) -> int:
    if "2 input draws" in execution:
        return 2
    found = re.search(r"least of (\d+) input draws", execution)
    return int(found.group(1)) if found else 1


def _native(folder: Path, shrink: dict[str, int], draws: dict[str, int]) -> float:
    import torch

    from solbench.spec import load_problem
    from solbench.spec.inputs import InputContext, generate_inputs
    from solbench.spec.reference_code import import_reference
    from solbench.torch_threads import at_most_threads

    problem = load_problem(folder, device="cuda")
    module, module_folder = import_reference(problem.definition, "cpu")
    seconds = 0.0
    try:
        with at_most_threads(1), torch.no_grad():
            for workload in problem.workloads:
                axes = problem.definition.resolve_axes({**workload.axes, **shrink}, const_overrides=True)
                for draw in range(draws[workload.uuid]):
                    start = time.perf_counter()
                    inputs = generate_inputs(InputContext(problem, workload, axes, "cpu"), draw, module)
                    module.run(*inputs)
                    seconds += time.perf_counter() - start
    finally:
        shutil.rmtree(module_folder, ignore_errors=True)
    return seconds


if __name__ == "__main__":
    main()
