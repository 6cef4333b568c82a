"""Errors of the optimisation environment: each says what went wrong and what the caller can do."""

from __future__ import annotations

from solbench.errors import SolbenchError


class OptimizeError(SolbenchError):
    """Root of the optimize layer's errors (bad input to the environment, not a candidate's failure)."""


class BudgetExhausted(OptimizeError):
    """The budget has no evaluations (or tests, or seconds) left for this call."""

    def __init__(self, kind: str, used: str):
        self.kind, self.used = kind, used
        super().__init__(
            f"budget exhausted: {used}; no {kind} was run. The best candidate so far stays "
            f"(env.best; env.finalize() re-measures it); a larger solbench.Budget allows more"
        )


class InvalidBudget(OptimizeError):
    def __init__(self, field: str, value: object):
        self.field, self.value = field, value
        super().__init__(f"Budget.{field}: {value!r} must be a non-negative number or None (unlimited)")


class InvalidCandidate(OptimizeError):
    """The candidate is not a solution for this problem; nothing was evaluated and no budget was charged."""

    def __init__(self, where: str, reason: str):
        self.where, self.reason = where, reason
        super().__init__(f"{where}: {reason}")


class UnknownWorkload(OptimizeError):
    """A call named a workload that is not public in this environment (a held-out one is answered the same way, so
    the split stays secret); nothing was evaluated."""

    def __init__(self, workload: str, public: list[str]):
        self.workload, self.public = workload, public
        super().__init__(f"workload: {workload!r} is not a public workload (public: {', '.join(public)})")


class AlreadyFinalized(OptimizeError):
    """A step or test after `finalize`: the held-out workloads have been measured, so the environment is over."""

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(
            f"{problem}: this environment was finalized (its held-out workloads measured) and takes no more "
            "candidates; env.finalize() answers its result again, and a new environment (solbench.make) goes on"
        )


class InvalidSeed(OptimizeError):
    """A test's input seed outside what the evaluator takes (0 up to 2**62); nothing was evaluated."""

    def __init__(self, seed: int, limit: int):
        self.seed, self.limit = seed, limit
        super().__init__(f"seed: {seed} is not an input seed (0 <= seed < 2**62 = {limit}); use a failure's input_seed")


class InvalidHeldOut(OptimizeError):
    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"held_out: {reason}")


class InvalidReward(OptimizeError):
    def __init__(self, name: str, known: tuple[str, ...]):
        self.name = name
        super().__init__(f"reward: unknown reward {name!r} (known: {', '.join(known)})")


class RestoreMismatch(OptimizeError):
    """A record handed to `Env.restore` was made by a different problem or reward."""

    def __init__(self, index: int, reason: str):
        self.index, self.reason = index, reason
        super().__init__(f"restore: record {index}: {reason}")


class StateMismatch(OptimizeError):
    """A snapshot handed to `Env.resume` was taken of an environment with another problem or reward."""

    def __init__(self, snapshot: str, env: str):
        self.snapshot, self.env = snapshot, env
        super().__init__(f"resume: the snapshot is of {snapshot} (problem/reward), this environment is {env}")


class UnknownTemplate(OptimizeError):
    """A template was asked for in a language or calling style none is written for."""

    def __init__(self, what: str, name: str, known: tuple[str, ...]):
        self.what, self.name = what, name
        super().__init__(f"no template for {what} {name!r} (templates: {', '.join(known)})")


class InvalidRunSource(OptimizeError):
    """A path given to `solbench report` or `solbench export trajectories` holds no run this version reads."""

    def __init__(self, path: object, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


class InvalidEnvHistory(InvalidRunSource):
    """A file is not an env history (`solbench.optimize.env_history`)."""

    def __init__(self, path: object, reason: str):
        super().__init__(path, f"not a solbench env history ({reason})")


class InvalidMetricOption(OptimizeError):
    """A metric asked for with a value it is not defined for (pass@k with k < 1, fast_p with p <= 0)."""

    def __init__(self, option: str, value: object, reason: str):
        self.option, self.value = option, value
        super().__init__(f"{option} {value!r}: {reason}")
