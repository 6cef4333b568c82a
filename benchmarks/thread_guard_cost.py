"""What the thread guard costs a timed call, and how much noise its between-call accounting sees.

Prints, side by side, in one process set up as the sandbox sets itself up (torch's pool started
before the guard is made):

  bare call         a small torch call, timed alone
  + settle          the same call followed by ThreadGuard.settle, as inside the timer: the fast
                    path (no solution threads) and with idle native threads (torch's inter-op pool)
  gap check         begin_gap + a cache flush + check_gap, outside the timer, against the flush alone
  gap noise         the largest CPU time the accounting gives the solution over N flushes while
                    torch's pool spins (no solution thread works: anything above 0 is noise; the
                    refusal threshold is 0.5 ms)

Usage: python benchmarks/thread_guard_cost.py [--iterations N]
"""

from __future__ import annotations

import argparse
import statistics
import time


def _medians_us(functions: list, iterations: int) -> list[float]:
    """Median time of each function, measured in turns so that drift in the machine's speed hits all alike."""
    samples: list[list[int]] = [[] for _ in functions]
    for _ in range(iterations):
        for function, kept in zip(functions, samples):
            start = time.perf_counter_ns()
            function()
            kept.append(time.perf_counter_ns() - start)
    return [statistics.median(kept) / 1e3 for kept in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    args = parser.parse_args()

    import torch

    from solbench.guard.threads import ThreadGuard, start_runtime_threads
    from solbench.sandbox.flush import CpuCacheFlusher

    start_runtime_threads("cpu")
    guard = ThreadGuard()
    flusher = CpuCacheFlusher()
    x = torch.randn(4096)

    def call():
        return x * 2

    def call_and_settle():
        call()
        guard.settle("after the call returned")

    bare, fast = _medians_us([call, call_and_settle], args.iterations)

    @torch.jit.script
    def work(t: torch.Tensor) -> torch.Tensor:
        return t + 1

    @torch.jit.script
    def launch(t: torch.Tensor) -> torch.jit.Future[torch.Tensor]:
        return torch.jit.fork(work, t)

    launch(x).wait()  # torch's inter-op pool: native threads, idle from now on
    guard.settle("after the call returned")
    bare_again, with_native = _medians_us([call, call_and_settle], args.iterations)
    natives = len(guard.native)

    def gap():
        guard.begin_gap()
        flusher.flush()
        guard.check_gap("between timed calls")

    flush_alone, gap_us = _medians_us([flusher.flush, gap], args.iterations // 3)
    worst = float("-inf")
    for _ in range(args.iterations):
        torch.ones(1 << 20).add_(1)  # a parallel region: the pool spins after it
        guard.begin_gap()
        flusher.flush()
        worst = max(worst, guard._solution_cpu_s(guard._find_native_threads())[0] - guard._gap[0])

    print(f"{'measure':<34}{'median µs':>12}{'ratio':>10}")
    print(f"{'bare call':<34}{bare:>12.2f}{1.0:>10.2f}")
    print(f"{'+ settle, no solution threads':<34}{fast:>12.2f}{fast / bare:>10.2f}")
    print(f"{'bare call, again':<34}{bare_again:>12.2f}{1.0:>10.2f}")
    print(f"{f'+ settle, {natives} idle native threads':<34}{with_native:>12.2f}{with_native / bare_again:>10.2f}")
    print(f"{'flush alone':<34}{flush_alone:>12.2f}{1.0:>10.2f}")
    print(f"{'begin_gap + flush + check_gap':<34}{gap_us:>12.2f}{gap_us / flush_alone:>10.2f}")
    print(
        f"gap noise: largest CPU time given to the solution over {args.iterations} flushes: "
        f"{worst * 1e3:.3f} ms (refused above 0.5 ms)"
    )


if __name__ == "__main__":
    main()
