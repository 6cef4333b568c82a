"""Agent throughput on one machine: full evaluations (`env.step`) and correctness checks (`env.test`) per minute,
one rollout at a time (today's path) beside several rollouts at once, and one kernel's reward across environments.

On examples/rmsnorm with the default evaluation settings (`solbench.make`'s), `--hardware local`:

  sequential   one environment, its candidates one after another
  parallel     `--rollouts` environments, each in a thread of its own, stepping at once: their correctness rounds
               overlap, their timed sections take the device's turn one at a time (evaluation/device_turn.py)

Each candidate is the bundled solution made distinct by a comment (so no result cache answers it). The reward
spread is (max - min) / mean of the same kernel's reward in `--rollouts` + 1 fresh environments sharing one
result-cache folder.

Usage: python benchmarks/agent_throughput.py [--steps N] [--tests N] [--rollouts K]
Targets (issue 31): at least 30 full evaluations and 90 tests a minute on a 2-core machine, spread within 3%.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "examples" / "rmsnorm"
SOLUTION = PROBLEM / "solution_pytorch.json"


def _candidate(tag: str):
    import solbench

    base = solbench.load_solution(SOLUTION)
    sources = [s.model_copy(update={"content": s.content + f"\n# candidate {tag}\n"}) for s in base.sources]
    return base.model_copy(update={"name": f"{base.name}_{tag}", "sources": sources})


def _env(cache: Path):
    import solbench

    return solbench.make(PROBLEM, hardware="local", budget=solbench.Budget(evals=1000, tests=1000), cache=cache)


def _rate(count: int, seconds: float) -> float:
    return 60.0 * count / seconds if seconds > 0 else float("inf")


def _run(envs: list, calls: int, kind: str) -> float:
    """Calls per minute: `calls` calls of `kind` on each environment, the environments in threads of their own."""

    def work(index: int, env) -> None:
        for call in range(calls):
            getattr(env, kind)(_candidate(f"{kind}-{index}-{call}-{time.monotonic_ns()}"))

    threads = [threading.Thread(target=work, args=(i, env)) for i, env in enumerate(envs)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return _rate(calls * len(envs), time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="full evaluations per environment")
    parser.add_argument("--tests", type=int, default=6, help="correctness checks per environment")
    parser.add_argument("--rollouts", type=int, default=2, help="environments at once in the parallel mode")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder)
        print(f"examples/rmsnorm, default settings, --hardware local; {args.rollouts} rollouts in the parallel mode")
        single = _env(cache / "sequential")
        many = [_env(cache / "parallel") for _ in range(args.rollouts)]
        try:
            for env in (single, *many):  # the card (T_SOL, T_b) is made once per environment, not timed here
                env.reset()
            print(f"{'':12}{'steps/min':>12}{'tests/min':>12}")
            for name, envs in (("sequential", [single]), ("parallel", many)):
                steps = _run(envs, args.steps, "step")
                tests = _run(envs, args.tests, "test")
                print(f"{name:12}{steps:12.1f}{tests:12.1f}")
        finally:
            for env in (single, *many):
                env.close()
        rewards = []
        for index in range(args.rollouts + 1):  # the same kernel, tagged apart so that no result cache answers it
            with _env(cache / "spread") as env:
                rewards.append(env.step(_candidate(f"spread-{index}")).reward)
        spread = (max(rewards) - min(rewards)) / statistics.mean(rewards)
        shown = [round(r, 3) for r in rewards]
        print(f"one kernel's reward in {len(rewards)} environments: {shown}, spread {spread:.1%}")


if __name__ == "__main__":
    main()
