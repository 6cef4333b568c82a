"""Warm spare sandboxes: the next candidate skips the sandbox's start-up, never its isolation.

One sandbox per solution stays the rule: a process a solution's code has run in is never used
again. What a pool keeps ready is a *spare*: a sandbox process already spawned, confined (its
user, network namespace, Landlock, limits, scrubbed environment), with torch imported, the
runtime's threads started and the integrity snapshot taken, that has received no request yet,
so nothing of any solution was ever loaded into it. `take` hands a spare over, for good (there is
no way to give a session back). `refill`, called by `evaluate` when the evaluation ends, starts
the next spare, so it warms up while the caller thinks (an agent's next step) instead of
competing with the timed calls for the CPU.

A spare is started from the thread that calls `take` (or makes the pool): the sandbox dies with
that thread (see confinement._die_with_parent), so use a pool from the thread that evaluates.
"""

from __future__ import annotations

from solbench.evaluation.confinement import SandboxLimits
from solbench.evaluation.session import SandboxSession


class SandboxPool:
    """Keeps `spares` started, unused sandboxes for one device and memory limit ready for `take`.

    Pass it to `solbench.evaluate(..., sandboxes=pool)`; an evaluation whose device or limits differ
    gets a fresh sandbox instead. `close()` (or leaving a ``with`` block) stops the spares.
    """

    def __init__(
        self,
        device: str = "cpu",
        memory_limit_bytes: int | None = None,
        spares: int = 1,
        containment: str = "auto",
        threads: int | None = None,
    ):
        from solbench.evaluation.config import default_memory_limit_bytes

        self.device = device
        self.limits = SandboxLimits(
            memory_bytes=default_memory_limit_bytes() if memory_limit_bytes is None else memory_limit_bytes,
            containment=containment,
            threads=threads,
        )
        self.spares = spares
        self._ready: list[SandboxSession] = []
        self.started = 0
        """Sandboxes this pool started, spares that were never taken included."""
        self.taken = 0
        """Spares handed to a caller warm (started before the call that took them)."""
        self._fill()

    @classmethod
    def for_config(cls, config, spares: int = 1) -> SandboxPool:
        """A pool whose spares suit evaluations under `config` (an EvaluationConfig; `auto` and the thread count
        resolved now, so evaluations from this thread at the same count take them)."""
        resolved = config.resolved().with_threads()
        return cls(resolved.device, resolved.memory_limit_bytes, spares, resolved.containment, resolved.threads)

    def suits(self, device: str, limits: SandboxLimits) -> bool:
        return device == self.device and limits == self.limits

    def take(self, device: str, limits: SandboxLimits) -> SandboxSession:
        """A sandbox no solution has run in, for good: a warm spare when one suits, else a fresh one.

        The next spare is not started here but by `refill`, which `evaluate` calls when its evaluation
        ends: a spare importing torch meanwhile would compete with the timed calls for the CPU.
        """
        if not self.suits(device, limits):
            return SandboxSession(device, limits)
        while self._ready:
            session = self._ready.pop(0)
            if session.alive:
                session.take_scheduling_baseline()
                self.taken += 1
                return session
            session.close()  # died while waiting (killed from outside): never handed over
        self.started += 1
        return SandboxSession(device, limits)

    def refill(self) -> None:
        """Start spares until `spares` are ready (they warm up while the caller does something else)."""
        self._fill()

    @property
    def ready_pids(self) -> list[int]:
        """Process ids of the spares waiting now (for tests and diagnostics)."""
        return [session.process.pid for session in self._ready]

    def _fill(self) -> None:
        while len(self._ready) < self.spares:
            self._ready.append(SandboxSession(self.device, self.limits))
            self.started += 1

    def close(self) -> None:
        """Stop every spare; the pool starts no more."""
        self.spares = 0
        while self._ready:
            self._ready.pop().close()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def warm_sandboxes(config=None, spares: int = 1) -> SandboxPool:
    """A pool of `spares` warm sandboxes for evaluations under `config` (default EvaluationConfig())."""
    from solbench.evaluation.config import EvaluationConfig

    return SandboxPool.for_config(config or EvaluationConfig(), spares)
