# pyright: reportMissingImports=false
# (the rl extra is not in dev: CI's type check runs without it; checked with it installed, docs/agent-env.md)
"""The optimisation environment as a `verifiers` (v1) taskset: one rollout is one kernel, written in one reply.

The model gets the problem's instructions (the solution contract) and card as its prompt and replies with a
solution.json object; the task's reward steps it in a fresh solbench environment (`EnvSettings`: this machine, or a
leaderboard service's workers) and is the StepResult's reward. A reply that is not a solution of the problem gets
the failing reward and evaluates nothing. Load it by id, as any taskset:

    vf-eval solbench-verifiers --env.taskset.problems '["examples/rmsnorm"]' ...

(the id is the package solbench_verifiers, which exports this module's taskset and harness). Its default harness,
`SolutionReplyHarness`, asks the model once through verifiers' interception endpoint, in this process (no sandbox,
nothing to install); any other harness (`--env.agent.harness.id null`, ...) works too: the reward reads the trace's
last reply.

`pip install 'solbench[rl]'` brings verifiers; nothing else in solbench imports it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.configs.harness import HarnessConfig
from verifiers.v1.harness import Harness
from verifiers.v1.runtimes import ProgramResult

from solbench.optimize import InvalidCandidate, ProblemCard, solution_from_text
from solbench.optimize.instructions import instructions_text
from solbench.optimize.rewards import reward_of
from solbench.service.episode_envs import EnvOpener, EnvSettings

TASKSET_ID = "solbench-verifiers"
"""What `--env.taskset.id` names: the top-level package solbench_verifiers (verifiers imports a taskset, and the
harness of the same id, by the package named after the id)."""
FENCED_JSON = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```", re.DOTALL)


class KernelTaskConfig(vf.TaskConfig):
    """How each rollout's environment is opened (`--env.taskset.task.env.*`); the problem comes from the task."""

    env: EnvSettings = EnvSettings()


class KernelTaskData(vf.TaskData):
    problem: str
    """The problem folder, or the service's problem name."""
    reward_kind: str
    """The reward the task gives (the settings'), kept on the trace."""


class KernelTask(vf.Task[KernelTaskData]):
    """One problem; its reward evaluates the model's last reply. Its config is a `KernelTaskConfig` (typed as the
    base: verifiers' Taskset bound holds a task's config type invariant)."""

    @vf.reward
    async def kernel_reward(self, task: KernelTaskData, trace: vf.Trace) -> float:
        """The StepResult's reward of the reply, stepped in a fresh environment; also records `correct` and
        `invalid` (1 when the reply is not a solution of the problem)."""
        try:
            solution = solution_from_text(reply_json(trace.last_reply))
        except InvalidCandidate:
            trace.record_metrics({"correct": 0.0, "invalid": 1.0})
            return reward_of(task.reward_kind, [])
        config = self.config
        if not isinstance(config, KernelTaskConfig):
            raise TypeError(f"{type(self).__name__} needs a KernelTaskConfig, not a {type(config).__name__}")
        opener = EnvOpener(task.problem, config.env)
        try:
            try:
                result = await opener.astep_once(solution)
            except InvalidCandidate:  # another definition's solution, a static rule: refused before running
                trace.record_metrics({"correct": 0.0, "invalid": 1.0})
                return reward_of(task.reward_kind, [])
        finally:
            opener.close()
        trace.record_metrics({"correct": float(result.info.correct), "invalid": 0.0})
        return result.reward


class KernelTasksetConfig(vf.TasksetConfig):
    id: str = TASKSET_ID
    problems: list[str] = Field(default_factory=list)
    """Problem folders (local), or the service's problem names (with `task.env.server`): one task each."""
    task: KernelTaskConfig = KernelTaskConfig()


class KernelTaskset(vf.Taskset[KernelTask, KernelTasksetConfig]):
    """One task per problem. Loading opens each problem's environment once for its card (T_SOL and T_b)."""

    def load(self) -> Iterator[KernelTask]:
        for problem in self.config.problems:
            opener = EnvOpener(problem, self.config.task.env)
            env = opener.open(warm_sandboxes=False)
            try:
                card = env.problem_card
            finally:
                env.close()
                opener.close()
            data = KernelTaskData.model_validate(  # validated: verifiers' TaskData defaults escape the type checker
                {"name": card.problem, "prompt": kernel_prompt(card), "problem": problem, "reward_kind": card.reward}
            )
            yield KernelTask(data, self.config.task)


def kernel_prompt(card: ProblemCard) -> str:
    """The solution contract as INSTRUCTIONS.md renders it, the card (workloads, T_SOL, T_b, hardware), and what
    to reply."""
    card_json = card.model_dump_json(exclude={"contract", "budget_left"}, indent=1)
    return (
        f"{instructions_text(card.contract)}\n\n## The problem card\n\n```json\n{card_json}\n```\n\n"
        "Reply with one solution.json object and nothing else (a ```json block is fine). It is evaluated once on "
        f"the public workloads; your reward is its `{card.reward}` reward."
    )


def reply_json(reply: str) -> str:
    """The JSON text of a reply: the whole reply, or its first fenced ```json block."""
    fenced = FENCED_JSON.search(reply)
    return fenced.group(1) if fenced is not None else reply.strip()


class SolutionReplyHarnessConfig(HarnessConfig):
    id: str = TASKSET_ID


class SolutionReplyHarness(Harness[SolutionReplyHarnessConfig]):
    """The model asked once, in this process, through the rollout's interception endpoint (so the trace records
    the call as for any harness); its reply is the candidate. No tools, no sandbox."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data, **_: Any) -> ProgramResult:
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        async with httpx.AsyncClient(timeout=httpx.Timeout(None, connect=30.0)) as http:
            response = await http.post(
                endpoint.rstrip("/") + "/chat/completions",
                headers={"Authorization": f"Bearer {secret}"},
                json={"model": ctx.model, "messages": messages},
            )
        failed = response.status_code >= 400
        return ProgramResult(
            exit_code=1 if failed else 0,
            stdout="" if failed else json.dumps({"status": response.status_code}),
            stderr=response.text[-2000:] if failed else "",
        )
