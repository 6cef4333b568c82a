"""Evaluator overhead: whole `solbench eval` wall time against the time spent inside timed calls.

Runs `solbench eval --json` as a user would (a fresh process, sandbox start-up included) on a
small problem (the bundled RMSNorm example) and a large one (a 2048^3 float32 matrix product
written here), and prints, side by side:

  wall_s           whole command, start to exit
  solution_s       sum of the solution's timed samples (what the latency is made of)
  reference_s      sum of the reference's timed samples
  wall/solution    the overhead ratio the issue asks for
  wall/(sol+ref)   the same, counting the reference's timing as useful work
  startup_s        time until the first workload began (sandbox start, build, reference import)

Usage: python benchmarks/eval_overhead.py [--budget SECONDS]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LARGE_MATMUL = {
    "name": "matmul_fp32_2048",
    "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 2048}, "N": {"type": "const", "value": 2048}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "float32"}, "B": {"shape": ["K", "N"], "dtype": "float32"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(A, B):\n    return A @ B\n",
}


def _large_problem(folder: Path) -> tuple[Path, Path]:
    problem = folder / "matmul"
    problem.mkdir()
    (problem / "definition.json").write_text(json.dumps(LARGE_MATMUL))
    (problem / "workload.jsonl").write_text(
        json.dumps({"uuid": "m2048", "axes": {"M": 2048}, "inputs": {"A": {"type": "random"}, "B": {"type": "random"}}})
        + "\n"
    )
    solution = folder / "matmul_solution.json"
    solution.write_text(
        json.dumps(
            {
                "name": "matmul_torch_mm",
                "definition": "matmul_fp32_2048",
                "author": "benchmarks",
                "spec": {"languages": ["pytorch"], "entry_point": "kernel.py::run", "destination_passing_style": True},
                "sources": [
                    {"path": "kernel.py", "content": "import torch\n\ndef run(A, B, C):\n    torch.mm(A, B, out=C)\n"}
                ],
            }
        )
    )
    return problem, solution


def measure(problem: Path, solution: Path, budget: float) -> dict:
    command = [
        sys.executable,
        "-m",
        "solbench",
        "eval",
        str(problem),
        "--solution",
        str(solution),
        "--json",
        "--budget",
        str(budget),
    ]
    started = time.monotonic()
    first_progress = None
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:  # "[0/N] workload ..." marks the start of the first workload
        if first_progress is None and line.startswith("[0/"):
            first_progress = time.monotonic() - started
    stdout = process.stdout.read()
    process.wait()
    wall = time.monotonic() - started
    traces = json.loads(stdout)
    solution_s = sum(sum(t["evaluation"]["solbench"]["timing"]["samples_ms"]) for t in traces) / 1e3
    reference_s = sum(sum(t["evaluation"]["solbench"]["reference_timing"]["samples_ms"]) for t in traces) / 1e3
    return {
        "problem": problem.name,
        "workloads": len(traces),
        "wall_s": wall,
        "solution_s": solution_s,
        "reference_s": reference_s,
        "wall/solution": wall / solution_s,
        "wall/(sol+ref)": wall / (solution_s + reference_s),
        "startup_s": first_progress or float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1.0, help="timing budget per workload (solbench eval --budget)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        large = _large_problem(Path(folder))
        rows = [
            measure(
                ROOT / "examples" / "rmsnorm", ROOT / "examples" / "rmsnorm" / "solution_pytorch.json", args.budget
            ),
            measure(*large, args.budget),
        ]
    columns = list(rows[0])
    print(" | ".join(f"{c:>14}" for c in columns))
    for row in rows:
        print(" | ".join(f"{row[c]:>14.3f}" if isinstance(row[c], float) else f"{row[c]:>14}" for c in columns))


if __name__ == "__main__":
    main()
