"""Rewards: one number per candidate from its per-workload feedback on the public workloads.

- ``sol`` (default): the SOL score S of the problem, the mean over the workloads as `solbench score`
  computes it (a failed workload counts 0, an unscored one is left out); 0 when none is scored.
- ``speedup``: the geometric mean of T_b / T_k (workloads without T_b left out); 0 unless every
  workload PASSED.
- ``log_speedup``: the natural log of ``speedup``, floored at ln(1/100); a candidate that failed
  anywhere gets the floor, so a correct candidate never earns less than a failing one.
- ``gated_sol``: ``sol`` gated on correctness: 0 unless every workload PASSED, else S, so a candidate
  that fails one workload earns nothing for the others.

A candidate flagged as a cheat (any REWARD_HACK), or with a workload measured below the speed-of-light floor
(IMPLAUSIBLE: faster than the hardware allows), earns the failing value of each reward.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from solbench.optimize.errors import InvalidReward
from solbench.optimize.feedback import CHEAT, IMPLAUSIBLE, PASSED, WorkloadFeedback
from solbench.scoring import geometric_mean, mean_score

LOG_SPEEDUP_FLOOR = math.log(1 / 100)


def _all_passed(feedback: list[WorkloadFeedback]) -> bool:
    return bool(feedback) and all(item.status == PASSED for item in feedback)


def sol_reward(feedback: list[WorkloadFeedback]) -> float:
    scores = [item.score for item in feedback if item.score is not None]
    return mean_score(scores)


def speedup_reward(feedback: list[WorkloadFeedback]) -> float:
    if not _all_passed(feedback):
        return 0.0
    speedups = [item.speedup for item in feedback if item.speedup]  # a workload without T_b is left out
    return geometric_mean(speedups) or 0.0


def log_speedup_reward(feedback: list[WorkloadFeedback]) -> float:
    speedup = speedup_reward(feedback)
    return max(math.log(speedup), LOG_SPEEDUP_FLOOR) if speedup > 0 else LOG_SPEEDUP_FLOOR


def gated_sol_reward(feedback: list[WorkloadFeedback]) -> float:
    return sol_reward(feedback) if _all_passed(feedback) else 0.0


REWARDS: dict[str, Callable[[list[WorkloadFeedback]], float]] = {
    "sol": sol_reward,
    "speedup": speedup_reward,
    "log_speedup": log_speedup_reward,
    "gated_sol": gated_sol_reward,
}


def check_reward(name: str) -> str:
    if name not in REWARDS:
        raise InvalidReward(name, tuple(REWARDS))
    return name


def reward_of(name: str, feedback: list[WorkloadFeedback]) -> float:
    """The reward `name` of a candidate with this feedback; a cheat or an IMPLAUSIBLE workload gets the failing
    value."""
    if any(item.status in (CHEAT, IMPLAUSIBLE) for item in feedback):
        return LOG_SPEEDUP_FLOOR if name == "log_speedup" else 0.0
    return REWARDS[name](feedback)
