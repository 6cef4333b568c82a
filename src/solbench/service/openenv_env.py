# pyright: reportMissingImports=false
# (the rl extra is not in dev: CI's type check runs without it; checked with it installed, docs/agent-env.md)
"""The optimisation environment as an OpenEnv environment (`openenv-core`), so OpenEnv clients and the trainers built
on them use it unchanged: reset, step and state over HTTP, with a typed action, observation and state.

An OpenEnv episode is one solbench environment, opened fresh by `reset` from `EnvSettings` (this machine's
`solbench.make`, or a leaderboard service's env): its own budget, history and best. The action is a solution
(`SolutionAction`, the Solution schema); the observation is the step's reward, per-workload feedback, info and
`done` (the budget is spent), and, after `reset`, the problem card; the state is the env's id, the steps taken, the
budget left and the best candidate. A solution that is not one of the problem is answered with the failing reward
and the reason, evaluating and charging nothing, as the gymnasium adapter does.

OpenEnv serves sessions over its WebSocket `/ws` (what its `EnvClient` speaks): one environment per session, its
calls run in that session's own thread. Its plain `POST /reset` and `POST /step` are stateless, each on a fresh
environment. `pip install 'solbench[rl]'` brings openenv-core; nothing else in solbench imports it.
"""

from __future__ import annotations

from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult as OpenEnvStep
from openenv.core.env_server import Action, Environment, Observation, State, create_app
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import Field

from solbench.optimize import BudgetLeft, Candidate, InvalidCandidate, ProblemCard, StepInfo, StepResult
from solbench.optimize.feedback import WorkloadFeedback
from solbench.optimize.rewards import reward_of
from solbench.service.episode_envs import EnvOpener, EnvSettings, OpenedEnv
from solbench.spec.solution import Solution

ENV_NAME = "solbench"


class SolutionAction(Action):
    """One candidate to evaluate on the problem's public workloads."""

    solution: Solution = Field(description="The solution.json object: the Solution schema (docs/agent-env.md).")


class KernelObservation(Observation):
    """What `reset` and `step` answer; `reward` and `done` are OpenEnv's own fields."""

    card: ProblemCard | None = Field(default=None, description="The problem card and solution contract (after reset).")
    feedback: list[WorkloadFeedback] = Field(default_factory=list, description="One entry per public workload.")
    info: StepInfo | None = Field(
        default=None, description="candidate_id, correct, is_best, cache_hit, budget_left, ..."
    )
    invalid_action: str | None = Field(default=None, description="Why the action is not a solution of this problem.")


class KernelState(State):
    """The environment behind the session: `episode_id` and `step_count` are OpenEnv's own fields."""

    problem: str | None = None
    env_id: int | None = Field(
        default=None, description="The service's env id (GET /api/v1/envs/{id}); None when local."
    )
    budget_left: BudgetLeft | None = None
    best: Candidate | None = Field(
        default=None, description="The correct, unflagged candidate with the highest reward."
    )


class SolbenchOpenEnv(Environment[SolutionAction, KernelObservation, KernelState]):
    """`SolbenchOpenEnv(problem, settings)`: an OpenEnv environment whose episodes are fresh solbench environments
    of `problem` (a folder, or the service's problem name)."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    """Each session opens its own environment; local ones share only the result cache, which is safe to share."""
    REQUIRES_SINGLE_THREAD_EXECUTOR = True
    """A local environment's spare sandbox serves the thread that started it."""

    def __init__(self, problem: str, settings: EnvSettings):
        super().__init__()
        self.problem = problem
        self.settings = settings
        self._opener = EnvOpener(problem, settings)
        self._env: OpenedEnv | None = None
        self._episode_id: str | None = None
        self._results: list[StepResult] = []
        self._budget_left: BudgetLeft | None = None

    def reset(self, seed: int | None = None, episode_id: str | None = None, **_: Any) -> KernelObservation:
        """A fresh environment for the problem (the previous episode's is closed): its card."""
        self._close_env()
        self._env = self._opener.open()
        self._episode_id = episode_id
        self._results = []
        card = self._env.reset(seed=seed)
        self._budget_left = card.budget_left
        return KernelObservation(card=card, reward=None, done=card.budget_left.exhausted)

    def step(self, action: SolutionAction, timeout_s: float | None = None, **_: Any) -> KernelObservation:
        """The solution evaluated; an episode not reset yet is reset first (OpenEnv's stateless `POST /step`)."""
        if self._env is None:
            self.reset()
        assert self._env is not None, "reset opened one"
        try:
            result = self._env.step(action.solution)
        except InvalidCandidate as error:
            failing = reward_of(self._env.problem_card.reward, [])
            done = self._budget_left.exhausted if self._budget_left is not None else False
            return KernelObservation(reward=failing, done=done, invalid_action=str(error))
        self._results.append(result)
        self._budget_left = result.info.budget_left
        return KernelObservation(reward=result.reward, done=result.done, feedback=result.feedback, info=result.info)

    @property
    def state(self) -> KernelState:
        """Kept from the answers so far: reading it costs no request to a service."""
        env = self._env
        return KernelState(
            episode_id=self._episode_id,
            step_count=len(self._results),
            problem=env.problem_card.problem if env is not None else None,
            env_id=getattr(env, "id", None),
            budget_left=self._budget_left,
            best=_best(self._results),
        )

    def get_metadata(self) -> EnvironmentMetadata:
        where, reward = self.settings.server or "this machine", self.settings.reward
        return EnvironmentMetadata(
            name=ENV_NAME,
            description=f"Optimise a kernel for {self.problem!r} (evaluated on {where}); reward: {reward}",
        )

    def close(self) -> None:
        self._close_env()
        self._opener.close()

    def _close_env(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None


def _best(results: list[StepResult]) -> Candidate | None:
    """As `Env.best`: the correct, unflagged result with the highest reward, the earliest among equals."""
    best = None
    for result in results:
        if result.info.correct and not result.info.flagged_cheat and (best is None or result.reward > best.reward):
            best = result
    return Candidate.of(best) if best is not None else None


def openenv_app(problem: str, settings: EnvSettings, *, max_sessions: int = 1):
    """OpenEnv's own FastAPI app (`create_app`) over `problem`'s environments: `/ws` sessions, `/reset`, `/step`,
    `/state`, `/schema`, `/health`; at most `max_sessions` episodes at once, each with its own environment."""
    return create_app(
        lambda: SolbenchOpenEnv(problem, settings),
        SolutionAction,
        KernelObservation,
        env_name=ENV_NAME,
        max_concurrent_envs=max_sessions,
    )


def serve_openenv(
    problem: str, settings: EnvSettings, *, host: str = "127.0.0.1", port: int = 8001, max_sessions: int = 1
) -> None:
    """Serve `openenv_app` with uvicorn until interrupted."""
    import uvicorn

    app = openenv_app(problem, settings, max_sessions=max_sessions)
    uvicorn.run(app, host=host, port=port, log_level="warning")


class SolbenchEnvClient(EnvClient[SolutionAction, KernelObservation, KernelState]):
    """OpenEnv's `EnvClient` typed for this environment: `await client.step(SolutionAction(solution=...))` answers a
    `KernelObservation`, `await client.state()` a `KernelState` (`.sync()` for the blocking calls)."""

    def _step_payload(self, action: SolutionAction) -> dict[str, Any]:
        return action.model_dump(mode="json", exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> OpenEnvStep[KernelObservation]:
        observation = KernelObservation.model_validate(
            {**payload.get("observation", {}), "reward": payload.get("reward"), "done": payload.get("done", False)}
        )
        return OpenEnvStep(observation=observation, reward=observation.reward, done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> KernelState:
        return KernelState.model_validate(payload)
