"""Evaluation throughput per candidate, as an optimisation loop sees it: before and after, side by side in one run.

Evaluates N candidates (the bundled RMSNorm solution, each made distinct by a comment so that the
result cache misses) on examples/rmsnorm on this CPU, the way a loop calls `solbench.evaluate`:

  before   a fresh sandbox per candidate, the 64 MiB streaming flush, the reference timed every time
  after    a warm spare sandbox (SandboxPool), the operand flush, the reference's timing reused
           (ReferenceTimings; the first candidate fills it, later ones reuse it)

and prints, per mode (mean over the candidates after the first, which pays for what later ones reuse):

  cache hit           an evaluation the result cache already holds (evaluate(..., cache=DIR))
  test                correctness rounds only (EvaluationConfig(time_solution=False)), no timing
  full                a full evaluation (rounds, timed loop, reference timing or its reuse)
  solution work       the sum of the solution's own timed samples in that evaluation
  full/work           the overhead ratio of a full evaluation over the solution's timed work
  start-up            start a sandbox (or take a spare) and build the candidate in it, until it answers

Between evaluations the loop waits `--think` seconds (default 3; an agent's model call takes longer), in
both modes: a spare sandbox warms up meanwhile.

Usage: python benchmarks/eval_throughput.py [--candidates N] [--budget SECONDS] [--think SECONDS]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "examples" / "rmsnorm"
SOLUTION = PROBLEM / "solution_pytorch.json"


def _candidates(count: int):
    import solbench

    base = solbench.load_solution(SOLUTION)
    variants = []
    for index in range(count):
        sources = [
            source.model_copy(update={"content": source.content + f"\n# candidate {index}\n"})
            for source in base.sources
        ]
        variants.append(base.model_copy(update={"name": f"{base.name}_{index}", "sources": sources}))
    return variants


def _startup(config, pool) -> float:
    """Seconds from asking for a sandbox to the candidate built in it."""
    import solbench
    from solbench.evaluation.confinement import SandboxLimits
    from solbench.evaluation.session import SandboxSession
    from solbench.sandbox.protocol import BuildRequest

    solution = solbench.load_solution(SOLUTION)
    limits = SandboxLimits(memory_bytes=config.memory_limit_bytes)
    started = time.perf_counter()
    session = pool.take(config.device, limits) if pool is not None else SandboxSession(config.device, limits)
    try:
        session.request(BuildRequest(solution=solution.model_dump(mode="json")), 600)
        return time.perf_counter() - started
    finally:
        session.close()
        if pool is not None:
            pool.refill()  # as evaluate does when it ends


def _mode(name: str, candidates, config, pool, reference_timings, cache_root: Path, think: float) -> dict:
    import solbench

    problem = solbench.load_problem(PROBLEM)
    full, work, test, hits, startups = [], [], [], [], []
    test_config = replace(config, time_solution=False)
    for candidate in candidates:
        time.sleep(think)  # a loop thinks between steps (an agent's model call); a spare warms up meanwhile
        started = time.perf_counter()
        traces = solbench.evaluate(
            problem,
            candidate,
            config=config,
            sandboxes=pool,
            reference_timings=reference_timings,
            cache=cache_root / name,
        )
        full.append(time.perf_counter() - started)
        statuses = {t.evaluation.status.value for t in traces}
        assert statuses == {"PASSED"}, (statuses, traces[0].evaluation.log[-2000:])
        work.append(sum(sum(t.evaluation.solbench.timing.samples_ms) for t in traces) / 1e3)
        started = time.perf_counter()
        solbench.evaluate(problem, candidate, config=config, cache=cache_root / name)
        hits.append(time.perf_counter() - started)
        time.sleep(think)
        started = time.perf_counter()
        solbench.evaluate(problem, candidate, config=test_config, sandboxes=pool)
        test.append(time.perf_counter() - started)
        time.sleep(think)
        startups.append(_startup(config, pool))
    steady = slice(1, None) if len(candidates) > 1 else slice(None)
    mean = lambda values: statistics.fmean(values[steady])  # noqa: E731 - a one-line helper next to its use
    return {
        "mode": name,
        "first full s": full[0],
        "cache hit s": mean(hits),
        "test s": mean(test),
        "full s": mean(full),
        "solution work s": mean(work),
        "full/work": mean(full) / mean(work),
        "start-up s": mean(startups),
    }


def _load() -> str:
    import os

    return "load average " + " ".join(f"{value:.1f}" for value in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--budget", type=float, default=1.0, help="timing budget per workload (seconds)")
    parser.add_argument(
        "--think",
        type=float,
        default=3.0,
        help="seconds between evaluations, in both modes (an agent's model call is longer)",
    )
    args = parser.parse_args()
    from solbench.evaluation import EvaluationConfig, ReferenceTimings, SandboxPool
    from solbench.sandbox import TimingPlan

    base = EvaluationConfig(device="cpu", timing=TimingPlan(budget_s=args.budget))
    candidates = _candidates(args.candidates)
    print(_load())
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        rows.append(
            _mode("before", candidates, replace(base, cpu_flush="stream"), None, None, Path(folder), args.think)
        )
        with SandboxPool.for_config(base) as pool:
            rows.append(
                _mode(
                    "after",
                    candidates,
                    replace(base, cpu_flush="operands"),
                    pool,
                    ReferenceTimings(),
                    Path(folder),
                    args.think,
                )
            )
    columns = list(rows[0])
    print(
        f"{PROBLEM.name}: {len(candidates)} candidates, 4 workloads each, budget {args.budget} s per workload, "
        f"{args.think} s between evaluations"
    )
    print(" | ".join(f"{c:>15}" for c in columns))
    for row in rows:
        print(" | ".join(f"{row[c]:>15.3f}" if isinstance(row[c], float) else f"{row[c]:>15}" for c in columns))
    print(_load())
    before, after = rows
    print("after/before: " + ", ".join(f"{c} {after[c] / before[c]:.2f}" for c in columns[1:]))


if __name__ == "__main__":
    main()
