"""A gymnasium.Env over the optimisation environment, so RL libraries that speak gymnasium use it unchanged.

The action is a solution's JSON text; the observation is a dict of two JSON texts, the problem
card and the last step's feedback (reward, per-workload feedback, info). Both spaces are
gymnasium Text spaces over printable ASCII: JSON is written with ``ensure_ascii``. An action that
is not a solution of the problem (not JSON, a missing field, another problem's) is answered
with the failing reward and the reason in the feedback; it evaluates nothing and costs nothing.
The episode is truncated when the budget allows no further evaluation; it never terminates on
its own (there is no final state in optimising a kernel).

This module imports gymnasium; `solbench.optimize` does not, so the core needs no gymnasium.
"""

from __future__ import annotations

import json
import string
from typing import Any

import gymnasium
from gymnasium import spaces

from solbench.optimize.env import Env, make, solution_from_text
from solbench.optimize.errors import InvalidCandidate, OptimizeError
from solbench.optimize.rewards import reward_of

CHARSET = string.printable
MAX_OBSERVATION_CHARS = 1 << 20
MAX_ACTION_CHARS = 1 << 17


class SolbenchGymEnv(gymnasium.Env):
    """`SolbenchGymEnv(problem, **make_arguments)` or `SolbenchGymEnv(env=an_env)`."""

    metadata = {"render_modes": []}

    def __init__(self, problem=None, *, env: Env | None = None, **make_arguments: Any):
        if (problem is None) == (env is None):
            raise OptimizeError("SolbenchGymEnv: give a problem (and make() arguments) or env=, not both")
        if env is None:
            assert problem is not None, "exactly one of problem and env= (checked above)"
            env = make(problem, **make_arguments)
        self.env = env
        text = spaces.Text(MAX_OBSERVATION_CHARS, min_length=0, charset=CHARSET)
        self.observation_space = spaces.Dict({"card": text, "feedback": text})
        self.action_space = spaces.Text(MAX_ACTION_CHARS, min_length=0, charset=CHARSET)
        self._card = ""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        card = self.env.reset(seed=seed)
        self._card = _json(card.model_dump(mode="json"))
        return {"card": self._card, "feedback": ""}, {"budget_left": card.budget_left.model_dump(mode="json")}

    def step(self, action: str):
        try:
            if not self.action_space.contains(action):
                raise InvalidCandidate(
                    "action",
                    f"not in the action space: a str of at most {MAX_ACTION_CHARS} printable ASCII characters "
                    f"(a solution's JSON with ensure_ascii), not {_described(action)}",
                )
            result = self.env.step(solution_from_text(action))
        except InvalidCandidate as error:
            failing = reward_of(self.env.reward, [])
            feedback = {"reward": failing, "invalid_action": str(error)}
            return (
                {"card": self._card, "feedback": _json(feedback)},
                failing,
                False,
                False,
                {"invalid_action": str(error)},
            )
        feedback = _json(result.model_dump(mode="json", exclude={"solution"}))
        self._card = _json(self.env.problem_card.model_dump(mode="json"))  # its budget_left, as spent now
        return (
            {"card": self._card, "feedback": feedback},
            float(result.reward),
            False,
            result.done,
            result.info.model_dump(mode="json"),
        )


def _described(action: Any) -> str:
    if not isinstance(action, str):
        return f"a {type(action).__name__}"
    if len(action) > MAX_ACTION_CHARS:
        return f"{len(action)} characters"
    return "a str with characters outside printable ASCII"


def _json(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, default=str)
    if len(text) > MAX_OBSERVATION_CHARS:
        raise OptimizeError(f"observation of {len(text)} characters exceeds the space's {MAX_OBSERVATION_CHARS}")
    return text
