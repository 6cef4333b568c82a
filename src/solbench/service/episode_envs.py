"""Where the RL adapters' environments come from: `solbench.make` on this machine, or a leaderboard service's envs.

The OpenEnv server (openenv_env.py) and the verifiers taskset (verifiers_env.py) open a fresh solbench environment
per episode with an `EnvOpener`: a problem folder evaluated here, or a problem of the service at `EnvSettings.server`
(its workers, result cache and T_b). Both kinds answer with the library's models, so an adapter never asks which.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from solbench.evaluation.config import EvaluationConfig
from solbench.optimize import Budget, ProblemCard, StepResult, check_reward, make
from solbench.service.env_client import RemoteEnvs
from solbench.spec.solution import Solution

LIBRARY = EvaluationConfig()


class OpenedEnv(Protocol):
    """What an adapter calls on an environment: a local `Env` or a service's `RemoteEnv`."""

    @property
    def problem_card(self) -> ProblemCard: ...

    def reset(self, seed: int | None = None) -> ProblemCard: ...

    def step(self, solution: Solution) -> StepResult: ...

    def close(self) -> None: ...


class EnvSettings(BaseModel):
    """How to open a problem's environments: locally (no `server`) or on a service."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    server: str | None = None
    """A leaderboard service's URL: its workers evaluate, with its cache and T_b. None: evaluate on this machine."""
    token: str | None = Field(default=None, exclude=True, repr=False)
    """The service's API token (default $SOLBENCH_TOKEN); never written out with the settings."""
    hardware: str | None = None
    """Hardware id T_SOL is computed for. Locally None means `local` (this CPU's probe); a service's is its workers'."""
    reward: str = "sol"
    """sol, speedup, log_speedup or gated_sol."""
    budget_evals: int | None = None
    """Evaluations each episode's environment allows (None: unlimited)."""
    budget_tests: int | None = None
    budget_seconds: float | None = None
    cache: Path | None = None
    """Local only: a result-cache folder shared by every episode (T_b and repeated candidates are then free)."""
    baselines: Path | None = None
    """Local only: a baselines JSON for T_b (else the reference is timed once, and cached with `cache`)."""
    device: str = LIBRARY.device
    """Local only: cpu, cuda or auto."""
    rounds: int = Field(default=LIBRARY.rounds, ge=1)
    """Local only: correctness rounds, each on fresh inputs."""
    timing_budget_s: float = Field(default=LIBRARY.timing.budget_s, gt=0)
    """Local only: seconds of timing per workload."""

    @field_validator("reward")
    @classmethod
    def _known_reward(cls, reward: str) -> str:
        return check_reward(reward)

    @model_validator(mode="after")
    def _local_settings_stay_local(self) -> EnvSettings:
        if self.server is not None:
            local = [name for name in ("cache", "baselines") if getattr(self, name) is not None]
            if local:
                raise ValueError(f"{', '.join(local)}: the server's own are used with `server`; leave them unset")
        return self

    @property
    def budget(self) -> Budget:
        return Budget(evals=self.budget_evals, tests=self.budget_tests, seconds=self.budget_seconds)

    def evaluation_config(self) -> EvaluationConfig:
        return replace(
            LIBRARY,
            device=self.device,
            rounds=self.rounds,
            timing=replace(LIBRARY.timing, budget_s=self.timing_budget_s),
        ).resolved()


class EnvOpener:
    """Opens a fresh environment of `problem` per episode; remote ones share one connection to the service.

    `problem` is a problem folder (local), or the name of one of the service's problems (`GET /api/v1/problems`).
    """

    def __init__(self, problem: str, settings: EnvSettings):
        self.problem = problem
        self.settings = settings
        self._service = RemoteEnvs(settings.server, settings.token) if settings.server is not None else None

    def open(self, *, warm_sandboxes: bool = True) -> OpenedEnv:
        settings = self.settings
        if self._service is not None:
            return self._service.make(
                self.problem, hardware=settings.hardware, budget=settings.budget, reward=settings.reward
            )
        return make(
            self.problem,
            hardware=settings.hardware or "local",
            budget=settings.budget,
            reward=settings.reward,
            cache=settings.cache,
            baselines=settings.baselines,
            config=settings.evaluation_config(),
            warm_sandboxes=warm_sandboxes,
        )

    async def astep_once(self, solution: Solution) -> StepResult:
        """One episode of one step, the way a single-reply rollout is rewarded: a fresh environment, `solution`
        stepped. Remote: both calls awaited, so many rollouts share the service's workers; local: in a thread,
        without a spare sandbox (nothing follows the step)."""
        settings = self.settings
        if self._service is not None:
            env = await self._service.amake(
                self.problem, hardware=settings.hardware, budget=settings.budget, reward=settings.reward
            )
            return await env.astep(solution)
        return await asyncio.to_thread(self._step_once, solution)

    def _step_once(self, solution: Solution) -> StepResult:
        env = self.open(warm_sandboxes=False)
        try:
            return env.step(solution)
        finally:
            env.close()

    def close(self) -> None:
        if self._service is not None:
            self._service.close()
