"""Baselines by search: T_b from the best candidate an agent's optimisation loop finds, beside the references.

`solbench baseline --agent CMD --rounds N` times the eager and compiled references as before (runner
layer), then runs `solbench optimize` with the agent on each problem, every workload public (T_b is
needed for all of them), and takes the best candidate's re-measurement from `finalize`. Per workload
T_b is the fastest candidate that PASSED, whichever it was. Each problem's loop keeps its workspace
under WORK/optimize/<set>/<problem>, so an interrupted measurement resumes there. `AgentSearch` is that
search as the runner's `BaselineSearch` (`runner.measure_baselines(search=...)`, `solbench.baseline`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from solbench.evaluation.config import EvaluationConfig
from solbench.optimize.loop import RoundReport, run_optimize
from solbench.optimize.run_settings import DEFAULT_AGENT_TIMEOUT_S, DEFAULT_CANDIDATES, OptimizeSettings
from solbench.runner.baseline import baselines_from_traces
from solbench.runner.jobs import Job
from solbench.runner.progress import Progress, SearchDone, SearchRound, SearchStarted, ignore
from solbench.scoring.baselines import Baseline
from solbench.spec.trace import Trace


@dataclass(frozen=True)
class SearchProblem:
    problem_dir: Path
    set: str
    name: str


@dataclass(frozen=True)
class SearchSettings:
    agent: str
    rounds: int
    candidates: int
    budget_evals: int | None
    agent_timeout_s: float
    hardware: str
    """The hardware id the baselines are for (also where T_SOL, and so the loop's reward, is computed)."""
    config: EvaluationConfig
    work: Path


def search_baselines(
    problems: list[SearchProblem],
    settings: SearchSettings,
    on_problem: Callable[[SearchProblem, str], None] | None = None,
    on_round: Callable[[RoundReport], None] | None = None,
) -> tuple[list[Baseline], list[str]]:
    """A Baseline per workload the best candidate PASSED in its re-measurement; notes for problems without one."""
    found: list[Baseline] = []
    notes: list[str] = []
    for problem in problems:
        workspace = settings.work / "optimize" / problem.set / problem.name
        result = run_optimize(
            OptimizeSettings(
                problem=problem.problem_dir,
                agent=settings.agent,
                workspace=workspace,
                rounds=settings.rounds,
                candidates=settings.candidates,
                budget_evals=settings.budget_evals,
                agent_timeout_s=settings.agent_timeout_s,
                resume=True,
                hardware=settings.hardware,
                config=settings.config,
                held_out=[],
            ),
            on_round=on_round,
        )
        if result.best is None or not result.final:
            notes.append(f"{problem.name}: the agent found no correct candidate ({workspace})")
            continue
        source = f"optimize ({settings.agent}) candidate {result.best}"
        traces = [Trace.model_validate(t) for t in result.final.get("traces", [])]
        found += baselines_from_traces(traces, settings.hardware, source)
        if on_problem:
            on_problem(problem, f"best {result.best}, reward {result.final.get('reward', 0):.3f}")
    return found, notes


@dataclass(frozen=True)
class AgentSearch:
    """A `BaselineSearch` (runner.baseline_measurement): `agent`'s optimisation loop of `rounds` rounds per problem,
    every workload public; its best candidate's re-measurement joins the candidates T_b is chosen from."""

    agent: str
    """A shell command run in each round folder, or builtin:reference / builtin:compile (`solbench optimize`)."""
    rounds: int
    candidates: int = DEFAULT_CANDIDATES
    """Candidates evaluated per round."""
    budget_evals: int | None = None
    """Evaluations per problem; None: unlimited."""
    agent_timeout_s: float = DEFAULT_AGENT_TIMEOUT_S

    def __call__(
        self, jobs: list[Job], hardware: str, config: EvaluationConfig, work: Path, progress: Progress = ignore
    ) -> tuple[list[Baseline], list[str]]:
        problems = [SearchProblem(job.problem_dir, job.set, job.name) for job in jobs]
        settings = SearchSettings(
            agent=self.agent,
            rounds=self.rounds,
            candidates=self.candidates,
            budget_evals=self.budget_evals,
            agent_timeout_s=self.agent_timeout_s,
            hardware=hardware,
            config=config,
            work=work,
        )
        progress(SearchStarted(self.agent, self.rounds, len(problems)))
        return search_baselines(
            problems,
            settings,
            on_problem=lambda problem, text: progress(SearchDone(f"{problem.set}/{problem.name}", text)),
            on_round=lambda report: progress(SearchRound(report, self.rounds)),
        )
