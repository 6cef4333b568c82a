"""What the CPU cache flush costs per timed call, and what it does to a memory-bound kernel's time against T_SOL.

Two parts, each measured side by side in one run:

1. Cost of one flush (outside the timer, but on every timed call): the 64 MiB streaming flush
   against the operand flush (the native helper's clflushopt/clflush over the call's buffers), for
   the 2048-element RMSNorm's operands and for a 64 MiB vector add's.
2. Measured latency through the real evaluator (the reference as the solution, `solbench.evaluate`)
   under each flush, against T_SOL on this CPU (`--hardware local`: the probe, measured now if
   none is stored) and against the same call timed hot by torch.utils.benchmark (no flush: data
   and code warm). A ratio below 1 against T_SOL would mean T_SOL is no lower bound.

Usage: python benchmarks/cpu_flush.py [--budget SECONDS] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RMSNORM = ROOT / "examples" / "rmsnorm"
VECTOR_ADD = {
    "name": "vector_add_fp32_16M",
    "axes": {"N": {"type": "var"}},
    "inputs": {"x": {"shape": ["N"], "dtype": "float32"}, "y": {"shape": ["N"], "dtype": "float32"}},
    "outputs": {"z": {"shape": ["N"], "dtype": "float32"}},
    "reference": "def run(x, y):\n    return x + y\n",
}
ADD_N = 16 << 20  # 64 MiB per operand


def _vector_add_problem(folder: Path) -> Path:
    root = folder / "vector_add"
    root.mkdir()
    (root / "definition.json").write_text(json.dumps(VECTOR_ADD))
    (root / "workload.jsonl").write_text(
        json.dumps({"uuid": "n16M", "axes": {"N": ADD_N}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}})
        + "\n"
    )
    return root


def _flush_cost(flusher, repeats: int) -> float:
    """Median seconds of one flush (each after the operands were touched, as the input rotation does)."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        flusher.flush()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def flush_costs(repeats: int) -> list[tuple[str, float, int]]:
    import torch

    from solbench.sandbox.flush import CpuCacheFlusher, OperandCacheFlusher
    from solbench.sandbox.line_flush import build_helper, load_helper

    helper = load_helper(build_helper())
    rmsnorm = [torch.randn(1, 2048), torch.randn(2048), torch.empty(1, 2048)]
    add = [torch.randn(ADD_N), torch.randn(ADD_N), torch.empty(ADD_N)]
    rows = []
    stream = CpuCacheFlusher()
    rows.append(("stream (any kernel)", _flush_cost(stream, repeats), stream.bytes))
    for name, operands in (("operands: rmsnorm 1x2048", rmsnorm), ("operands: vector add 3x64 MiB", add)):
        flusher = OperandCacheFlusher(lambda operands=operands: operands, helper)
        samples = []
        for _ in range(repeats):
            for tensor in operands:  # warm, as after the rotation's copy
                tensor.add_(0)
            started = time.perf_counter()
            flusher.flush()
            samples.append(time.perf_counter() - started)
        rows.append((name, statistics.median(samples), flusher.bytes))
    rows.append((f"operands flush instruction: {helper.instruction}, line {helper.line_bytes} B", float("nan"), 0))
    return rows


def _hot_ms(problem, workload) -> float:
    """The reference's call timed by torch.utils.benchmark on one input set, nothing flushed."""
    import torch.utils.benchmark as benchmark

    from solbench.evaluation.reference import ReferenceProgram
    from solbench.spec.inputs import InputContext, generate_inputs

    reference = ReferenceProgram(problem.definition, "cpu")
    try:
        inputs = generate_inputs(
            InputContext(problem, workload, problem.axes_of(workload), "cpu", ()), 1, reference.module
        )
        timer = benchmark.Timer("run(*inputs)", globals={"run": reference.module.run, "inputs": inputs})
        return timer.blocked_autorange(min_run_time=1.0).median * 1e3
    finally:
        reference.close()


def latencies(budget: float) -> list[dict]:
    from dataclasses import replace

    import solbench
    from solbench.evaluation import EvaluationConfig
    from solbench.hardware.local import load_or_probe
    from solbench.sandbox import TimingPlan
    from solbench.spec import reference_solution

    load_or_probe(lambda message: print(message, file=sys.stderr))
    base = EvaluationConfig(
        device="cpu", rounds=1, time_reference=False, check_precision=False, timing=TimingPlan(budget_s=budget)
    )
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for problem_dir, uuid in ((RMSNORM, "rmsnorm-b1"), (_vector_add_problem(Path(folder)), "n16M")):
            problem = solbench.load_problem(problem_dir)
            problem = replace(problem, workloads=tuple(w for w in problem.workloads if w.uuid == uuid))
            [sol] = solbench.analyze(problem, "local")
            row = {"kernel": f"{problem.name} {uuid}", "T_SOL ms": sol.t_sol_ms}
            for mode in ("stream", "operands"):
                [trace] = solbench.evaluate(
                    problem, reference_solution(problem.definition), config=replace(base, cpu_flush=mode)
                )
                timing = trace.evaluation.solbench.timing
                assert timing.flush_mode == mode, (timing.flush_mode, timing.flush_note)
                row[f"{mode} ms"] = timing.median_ms
                row[f"{mode}/T_SOL"] = timing.median_ms / sol.t_sol_ms
            row["hot ms"] = _hot_ms(problem, problem.workloads[0])
            row["hot/T_SOL"] = row["hot ms"] / sol.t_sol_ms
            rows.append(row)
    return rows


def _load() -> str:
    import os

    return "load average " + " ".join(f"{value:.1f}" for value in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1.0, help="timing budget per evaluation (seconds)")
    parser.add_argument("--repeats", type=int, default=50, help="flushes timed per flush kind")
    args = parser.parse_args()
    print(_load())
    print(f"{'flush':42} {'ms per call':>12} {'bytes':>12}")
    for name, seconds, size in flush_costs(args.repeats):
        print(f"{name:42} {seconds * 1e3:>12.3f} {size:>12}" if size else name)
    rows = latencies(args.budget)
    columns = list(rows[0])
    print()
    print(" | ".join(f"{c:>14}" for c in columns))
    for row in rows:
        print(" | ".join(f"{row[c]:>14.4f}" if isinstance(row[c], float) else f"{row[c]:>14}" for c in columns))
    print(_load())


if __name__ == "__main__":
    main()
