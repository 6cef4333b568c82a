"""`solbench mcp --server URL`: the MCP tools over a leaderboard service's environments instead of local ones.

The tools (optimize/mcp_server.py) are the same; behind them, each problem the agent names gets one
remote env, made on first use with this session's budget and reward. The server keeps budgets per env,
so with `--server` the budget flags hold for each problem, not for all of them together.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from solbench.optimize import Budget
from solbench.service.env_client import RemoteEnv, RemoteEnvs


class RemoteProblemsSession:
    """The service's problems, one `RemoteEnv` per problem; calls are served one at a time, as locally."""

    def __init__(self, envs: RemoteEnvs, *, budget: Budget, reward: str, hardware: str | None = None):
        self.envs = envs
        self.budget, self.reward, self.hardware = budget, reward, hardware
        self._opened: dict[str, RemoteEnv] = {}
        self._lock = threading.Lock()

    def list_problems(self) -> list[str]:
        return [problem["name"] for problem in self.envs.request("GET", "/problems")]

    def env(self, problem: str) -> RemoteEnv:
        if problem not in self._opened:
            self._opened[problem] = self.envs.make(
                problem, hardware=self.hardware, budget=self.budget, reward=self.reward
            )
        return self._opened[problem]

    def call(self, action: Callable[[], Any]) -> Any:
        with self._lock:
            return action()
