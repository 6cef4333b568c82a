"""The agent environment of a leaderboard service, with the interface of `solbench.make`'s Env (httpx).

`solbench.connect(url, token=…)` gives a `RemoteEnvs`; its `make(problem, …)` a `RemoteEnv` whose
`reset`, `step`, `test`, `finalize`, `best`, `history` and `budget_left` answer with the library's own
models, and raise its own `BudgetExhausted`, `InvalidCandidate` and `UnknownWorkload`. Each call also has an
async twin (`await env.astep(…)`): hundreds of rollouts in one event loop share the server's workers.

A call that evaluates is answered 202 while it is queued or running; the client asks the call's URL
again (the server waits up to `wait_s` each time) until the answer comes, so each call feels synchronous.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from os import PathLike
from pathlib import Path
from typing import Any

from solbench.optimize import (
    Budget,
    BudgetExhausted,
    BudgetLeft,
    Candidate,
    FinalResult,
    InvalidCandidate,
    ProblemCard,
    StepResult,
    TestResult,
    UnknownWorkload,
)
from solbench.service.client import TOKEN_VARIABLE
from solbench.service.errors import ServerRefused, ServiceError
from solbench.spec import Solution

DEFAULT_WAIT_S = 30.0
"""How long the server holds each request for a call's answer before answering 202."""
CALL_URL = re.compile(r"/api/v1(/envs/[0-9]+/calls/[0-9]+)")
"""The only URL a 202 may send the client to: the token goes with the request, so never another host."""
CandidateArg = Solution | dict | str | PathLike[str]


def connect(url: str, token: str | None = None, *, wait_s: float = DEFAULT_WAIT_S) -> RemoteEnvs:
    """The agent environments of the service at `url` (token: `token`, else $SOLBENCH_TOKEN)."""
    return RemoteEnvs(url, token, wait_s=wait_s)


class RemoteEnvs:
    """One user's connection to a service's environments: `make` opens one, `env(id)` attaches to one."""

    def __init__(self, url: str, token: str | None = None, *, wait_s: float = DEFAULT_WAIT_S):
        import httpx

        self.server = url.rstrip("/")
        self.wait_s = wait_s
        token = token or os.environ.get(TOKEN_VARIABLE)
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._timeout = httpx.Timeout(wait_s + 30.0, connect=30.0)
        self._http = httpx.Client(base_url=self.server + "/api/v1", headers=self._headers, timeout=self._timeout)
        self._async: dict[asyncio.AbstractEventLoop, Any] = {}
        """One AsyncClient per event loop (an httpx AsyncClient belongs to the loop that first used it)."""

    def make(
        self, problem: str, *, hardware: str | None = None, budget: Budget | None = None, reward: str = "sol"
    ) -> RemoteEnv:
        """A new environment for the server's problem named `problem` (GET /api/v1/problems); its card is made
        first (T_SOL and T_b worked out once, by a worker)."""
        created = self.request("POST", "/envs", _env_body(problem, hardware, budget, reward))
        return RemoteEnv(self, created["id"], ProblemCard.model_validate(created["card"]))

    async def amake(
        self, problem: str, *, hardware: str | None = None, budget: Budget | None = None, reward: str = "sol"
    ) -> RemoteEnv:
        created = await self.arequest("POST", "/envs", _env_body(problem, hardware, budget, reward))
        return RemoteEnv(self, created["id"], ProblemCard.model_validate(created["card"]))

    def env(self, env_id: int) -> RemoteEnv:
        """An environment made earlier (by this user)."""
        view = self.request("GET", f"/envs/{env_id}")
        card = view["card"]
        return RemoteEnv(self, env_id, ProblemCard.model_validate(card) if card is not None else None)

    def close(self) -> None:
        self._http.close()
        for loop, client in list(self._async.items()):
            if not loop.is_closed() and loop.is_running():
                loop.create_task(client.aclose())
        self._async.clear()

    async def aclose(self) -> None:
        """Close this event loop's connections (and the synchronous ones)."""
        client = self._async.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
        self.close()

    def __enter__(self) -> RemoteEnvs:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One call, its 202s followed until the answer; the library's exceptions for its refusals."""
        import httpx

        try:
            response = self._http.request(method, path, json=body, params=self._wait())
            while response.status_code == 202:
                response = self._http.get(_call_path(response), params=self._wait())
        except httpx.HTTPError as error:
            raise ServiceError(f"{self.server}: {type(error).__name__}: {error}") from None
        return _answer(response)

    async def arequest(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import httpx

        client = self._async_client()
        try:
            response = await client.request(method, path, json=body, params=self._wait())
            while response.status_code == 202:
                response = await client.get(_call_path(response), params=self._wait())
        except httpx.HTTPError as error:
            raise ServiceError(f"{self.server}: {type(error).__name__}: {error}") from None
        return _answer(response)

    def _wait(self) -> dict[str, float]:
        return {"wait": self.wait_s}

    def _async_client(self):
        import httpx

        loop = asyncio.get_running_loop()
        if loop not in self._async:
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
            self._async[loop] = httpx.AsyncClient(
                base_url=self.server + "/api/v1", headers=self._headers, timeout=self._timeout, limits=limits
            )
        return self._async[loop]


class RemoteEnv:
    """An environment on the server, as `solbench.make` gives one locally: same calls, same answers."""

    def __init__(self, service: RemoteEnvs, env_id: int, card: ProblemCard | None):
        self.service = service
        self.id = env_id
        self._card = card

    @property
    def problem(self) -> str:
        return self.problem_card.problem

    @property
    def reward(self) -> str:
        return self.problem_card.reward

    @property
    def problem_card(self) -> ProblemCard:
        if self._card is None:
            self._card = self.reset()
        return self._card

    def solution_template(self, language: str = "pytorch", style: str = "value") -> Solution:
        """A valid solution to start from, as `Env.solution_template` gives it: made here from the card's definition
        and the server's device, so it costs no request once the card is known."""
        from solbench.optimize.solution_templates import solution_template

        card = self.problem_card
        return solution_template(card.definition, language, style, card.device)

    def reset(self, seed: int | None = None) -> ProblemCard:
        """The card; history, best and budget stay the env's (as locally)."""
        self._card = ProblemCard.model_validate(self.service.request("POST", self._path("reset"), {"seed": seed}))
        return self._card

    async def areset(self, seed: int | None = None) -> ProblemCard:
        self._card = ProblemCard.model_validate(
            await self.service.arequest("POST", self._path("reset"), {"seed": seed})
        )
        return self._card

    def step(self, solution: CandidateArg) -> StepResult:
        return StepResult.model_validate(self.service.request("POST", self._path("step"), _candidate(solution)))

    async def astep(self, solution: CandidateArg) -> StepResult:
        return StepResult.model_validate(await self.service.arequest("POST", self._path("step"), _candidate(solution)))

    def test(self, solution: CandidateArg, *, seed: int | None = None, workload: str | None = None) -> TestResult:
        """As `Env.test`: `seed` replays a failure's inputs, `workload` tests that public workload only."""
        body = {**_candidate(solution), "seed": seed, "workload": workload}
        return TestResult.model_validate(self.service.request("POST", self._path("test"), body))

    async def atest(
        self, solution: CandidateArg, *, seed: int | None = None, workload: str | None = None
    ) -> TestResult:
        body = {**_candidate(solution), "seed": seed, "workload": workload}
        return TestResult.model_validate(await self.service.arequest("POST", self._path("test"), body))

    def finalize(self) -> FinalResult:
        return FinalResult.model_validate(self.service.request("POST", self._path("finalize")))

    async def afinalize(self) -> FinalResult:
        return FinalResult.model_validate(await self.service.arequest("POST", self._path("finalize")))

    def state(self) -> dict[str, Any]:
        """GET /envs/{id}: settings, card, history, best, budget left, the call running now."""
        return self.service.request("GET", f"/envs/{self.id}")

    async def astate(self) -> dict[str, Any]:
        return await self.service.arequest("GET", f"/envs/{self.id}")

    @property
    def history(self) -> list[Candidate]:
        return [Candidate.model_validate(c) for c in self.state()["history"]]

    @property
    def best(self) -> Candidate | None:
        best = self.state()["best"]
        return Candidate.model_validate(best) if best is not None else None

    @property
    def budget_left(self) -> BudgetLeft:
        return BudgetLeft.model_validate(self.state()["budget_left"])

    def close(self) -> None:
        """Nothing to stop here: the server's workers keep no sandbox for one env."""

    def __enter__(self) -> RemoteEnv:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def _path(self, call: str) -> str:
        return f"/envs/{self.id}/{call}"


def _env_body(problem: str, hardware: str | None, budget: Budget | None, reward: str) -> dict[str, Any]:
    budget = budget or Budget()
    return {
        "problem": problem,
        "hardware": hardware,
        "reward": reward,
        "budget_evals": budget.evals,
        "budget_tests": budget.tests,
        "budget_seconds": budget.seconds,
    }


def _candidate(solution: CandidateArg) -> dict[str, Any]:
    """The request body of a step or test: a Solution, its dict, or a path to its JSON file (loaded here)."""
    if isinstance(solution, Solution):
        return {"solution": solution.model_dump(mode="json", exclude_none=True)}
    if isinstance(solution, dict):
        return {"solution": solution}
    from solbench.spec import load_solution

    return {"solution": json.loads(load_solution(Path(solution)).model_dump_json(exclude_none=True))}


def _call_path(response) -> str:
    """The call's own path from a 202, relative to /api/v1; a URL of any other form (another host, another path,
    which the bearer token would follow) is refused."""
    url = response.json().get("url")
    matched = CALL_URL.fullmatch(url) if isinstance(url, str) else None
    if matched is None:
        raise ServiceError(f"{response.request.url}: the server's 202 names {url!r}, not a call of /api/v1/envs")
    return matched.group(1)


def _answer(response) -> Any:
    """The JSON of a 2xx; the library's exception for its refusals; ServerRefused for the rest."""
    if response.status_code < 400:
        return response.json()
    try:
        body = response.json()
    except ValueError:
        body = {"detail": response.text}
    arguments = body.get("arguments") or {}
    if body.get("error") == "BudgetExhausted":
        raise BudgetExhausted(arguments["kind"], arguments["used"])
    if body.get("error") == "InvalidCandidate":
        raise InvalidCandidate(arguments["where"], arguments["reason"])
    if body.get("error") == "UnknownWorkload":
        raise UnknownWorkload(arguments["workload"], arguments["public"])
    field, detail = str(body.get("field", "")), str(body.get("detail", response.text))
    if response.status_code == 422 and field.startswith("solution"):  # refused at the door, as the library would
        raise InvalidCandidate(field, detail.removeprefix(f"{field}: "))
    retry = response.headers.get("Retry-After")
    raise ServerRefused(response.status_code, detail, float(retry) if retry else None)
