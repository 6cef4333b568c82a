"""`solbench mcp`: the environment as MCP tools over stdio, for agents that speak MCP.

The server is only a client of the Python API: one `Env` per problem it is asked about, all
sharing one budget ledger and one result cache, so an MCP agent spends and reuses exactly what a
Python agent would. Calls are served one at a time (the SDK runs tools in threads; a lock keeps
the ledger and histories consistent).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from solbench.errors import SolbenchError
from solbench.evaluation.config import EvaluationConfig
from solbench.optimize.budget import Budget, BudgetLedger
from solbench.optimize.card import ProblemCard
from solbench.optimize.env import Env, solution_from_text
from solbench.optimize.errors import InvalidCandidate
from solbench.optimize.results import Candidate, StepResult, TestResult
from solbench.scoring import Baselines
from solbench.spec.problem import find_problem_folders
from solbench.spec.solution import Solution

SERVER_NAME = "solbench"
TOOLS = ("list_problems", "get_problem_card", "get_solution_template", "test", "evaluate", "history", "best")


@dataclass(frozen=True)
class ServerSettings:
    problems: Path
    """Folder of problems (or one problem folder); tools name a problem by its path below it."""
    hardware: str = "local"
    budget: Budget = Budget()
    reward: str = "sol"
    cache: Path | None = None
    config: EvaluationConfig | None = None
    baselines: Baselines | None = None


class ServedEnv(Protocol):
    """What the tools call on an environment: a local `Env`, or a service's (solbench.service.env_client)."""

    def reset(self) -> ProblemCard: ...

    def test(
        self, solution: Solution | dict, *, seed: int | None = None, workload: str | None = None
    ) -> TestResult: ...

    def step(self, solution: Solution | dict) -> StepResult: ...

    def solution_template(self, language: str = ..., style: str = ...) -> Solution: ...

    @property
    def history(self) -> list[Candidate]: ...

    @property
    def best(self) -> Candidate | None: ...


class EnvSession(Protocol):
    """The problems a server offers and their environments: `ProblemsSession` here, or a service's."""

    def list_problems(self) -> list[str]: ...

    def env(self, problem: str) -> ServedEnv: ...

    def call(self, action: Callable[[], Any]) -> Any: ...


class ProblemsSession:
    """The environments one server opens, one per problem, sharing a ledger and a cache."""

    def __init__(self, settings: ServerSettings):
        self.settings = settings
        self.ledger = BudgetLedger(settings.budget)
        self._envs: dict[Path, Env] = {}
        self._lock = threading.Lock()

    def list_problems(self) -> list[str]:
        root = self.settings.problems.resolve()
        return [
            str(folder.resolve().relative_to(root)) if folder.resolve() != root else "."
            for folder in find_problem_folders(root)
        ]

    def env(self, problem: str) -> Env:
        root = self.settings.problems.resolve()
        folder = (root / problem).resolve()
        if folder != root and root not in folder.parents:
            raise InvalidCandidate("problem", f"{problem!r} is outside {root}; use a name from list_problems")
        if folder not in self._envs:
            settings = self.settings
            self._envs[folder] = Env(
                folder,
                hardware=settings.hardware,
                budget=self.ledger,
                reward=settings.reward,
                cache=settings.cache,
                config=settings.config,
                baselines=settings.baselines,
            )
        return self._envs[folder]

    def call(self, action) -> Any:
        """Run one tool's action under the lock."""
        with self._lock:
            return action()


SolutionArgument = Solution | str
"""A tool's `solution`: a solution object, typed by the Solution schema, or (as before) its JSON text."""


def _solution(solution: SolutionArgument) -> Solution:
    return solution_from_text(solution) if isinstance(solution, str) else solution


def build_server(session: EnvSession):
    """An MCPServer whose tools call `session`; a SolbenchError becomes a tool error with its message."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(
        SERVER_NAME,
        instructions=(
            "Optimise compute kernels. list_problems, then get_problem_card(problem) for the definition, the "
            "reference, the public workloads with T_SOL and T_b, and the card's `contract`: how to write a solution "
            "(its schema, the entry point in the problem's own argument names, shapes and dtypes, both calling "
            "styles, the languages and how each is built, the tolerances and precision rule, the static rules). "
            "get_solution_template(problem, language, style) gives a valid solution to start from. "
            "test(problem, solution) checks correctness cheaply; evaluate(problem, solution) measures and scores a "
            "candidate against the shared budget; history and best report what was tried."
        ),
    )

    def run(action):
        try:
            return session.call(action)
        except SolbenchError as error:
            raise ToolError(str(error)) from None

    @server.tool()
    def list_problems() -> list[str]:
        """The problems this server offers, as paths to pass to the other tools."""
        return run(session.list_problems)

    @server.tool()
    def get_problem_card(problem: str) -> dict[str, Any]:
        """The problem card: definition, reference source, public workloads with T_SOL and T_b, hardware, budget."""
        return run(lambda: session.env(problem).reset().model_dump(mode="json"))

    @server.tool()
    def get_solution_template(problem: str, language: str = "pytorch", style: str = "value") -> dict[str, Any]:
        """A valid solution of the problem to start from: language pytorch, triton, cpp or cuda; style value
        (run returns the outputs) or dps (run writes into output buffers). The Python ones call the reference, so
        they pass as written; the compiled ones build and raise until their body is written."""
        return run(
            lambda: session.env(problem).solution_template(language, style).model_dump(mode="json", exclude_none=True)
        )

    @server.tool()
    def test(
        problem: str, solution: SolutionArgument, seed: int | None = None, workload: str | None = None
    ) -> dict[str, Any]:
        """Correctness only, on the smallest public workloads (or the public `workload` named by its uuid): cheap,
        never scored. Each status reports its `input_seed`; pass it as `seed` to replay the inputs a candidate
        failed on. Costs one test of the budget."""
        return run(
            lambda: session.env(problem).test(_solution(solution), seed=seed, workload=workload).model_dump(mode="json")
        )

    @server.tool()
    def evaluate(problem: str, solution: SolutionArgument) -> dict[str, Any]:
        """Measure and score a candidate on the public workloads: reward, per-workload feedback, budget left.
        A cache hit (a candidate measured before) costs nothing."""
        return run(lambda: _step_summary(session.env(problem).step(_solution(solution))))

    @server.tool()
    def history(problem: str) -> list[dict[str, Any]]:
        """Every candidate evaluated on this problem: id, name, reward, correct, flagged, cache hit."""
        return run(
            lambda: [
                {
                    "candidate_id": c.candidate_id,
                    "name": c.solution.name,
                    "reward": c.reward,
                    "correct": c.correct,
                    "flagged_cheat": c.flagged_cheat,
                    "cache_hit": c.cache_hit,
                }
                for c in session.env(problem).history
            ]
        )

    @server.tool()
    def best(problem: str) -> dict[str, Any] | None:
        """The best correct, compliant candidate so far (with its solution and feedback), or null."""
        return run(lambda: _dump(session.env(problem).best))

    return server


def _step_summary(result) -> dict[str, Any]:
    return result.model_dump(mode="json", exclude={"solution"})  # the agent sent the solution; no echo


def _dump(candidate) -> dict[str, Any] | None:
    return candidate.model_dump(mode="json") if candidate else None


def serve_stdio(session: EnvSession) -> None:
    """Serve until the client closes stdin. Only the protocol writes to stdout: anything else written to file
    descriptor 1 (a sandbox, a C library) is sent to stderr instead, where it cannot corrupt a message."""
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = protocol
    build_server(session).run("stdio")
