"""`solbench optimize` as a library workflow: rounds of an agent proposing candidates, each scored by the env.

Each round: a fresh round folder (workspace.py), the agent run in it (agents.py) while `solbench test`
requests are answered (channel.py), its problem/ files re-checked by hash, its candidates stepped
through the env and journaled one by one (journal.py), verified strategies remembered (memory.py).
At the end the env's best candidate is re-measured by `env.finalize` and written to DIR/best/.

Evaluation and scoring are the env's alone (`solbench.make`): the loop never judges a candidate
itself, so a cheat is whatever the env flags, and the best is `env.best`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solbench.evaluation.config import EvaluationConfig
from solbench.optimize.agents import Agent, AgentOutcome, agent_from_spec, end_orphaned_group, process_start_ticks
from solbench.optimize.channel import WORKSPACE_VARIABLE, ChannelServer
from solbench.optimize.instructions import guide_files
from solbench.optimize.journal import (
    JOURNAL_FILE,
    AgentFinished,
    AgentStarted,
    CandidateRecord,
    CardRecord,
    FinalRecord,
    Journal,
    ProblemEdited,
    RoundFinished,
    RoundStarted,
    RunRecord,
    TestRecord,
    to_json,
)
from solbench.optimize.loop_errors import WorkspaceError
from solbench.optimize.memory import StrategyMemory, StrategyRecord, stated_technique
from solbench.optimize.resume import RunState, run_state
from solbench.optimize.rewards import speedup_reward

if TYPE_CHECKING:
    from solbench.optimize.budget import BudgetLedger
    from solbench.optimize.env import Env
    from solbench.spec import Problem
from solbench.optimize.run_settings import OptimizeSettings, settings_to_json
from solbench.optimize.workspace import (
    MEMORY_FILE,
    ProblemFiles,
    Workspace,
    candidate_files,
    changed_problem_files,
    problem_sha256,
    write_json_atomically,
)

ROUND_VARIABLE = "SOLBENCH_ROUND"
BUDGET_VARIABLE = "SOLBENCH_BUDGET_LEFT"
DEVICE_VARIABLE = "SOLBENCH_DEVICE"
"""The device candidates are evaluated on (``cpu``, ``cuda``, ``cuda:1``): what a candidate must run on."""


@dataclass(frozen=True)
class CandidateSummary:
    candidate_id: str
    file: str
    reward: float | None = None
    statuses: dict[str, int] = field(default_factory=dict)
    flagged_cheat: bool = False
    cache_hit: bool = False
    error: str | None = None
    """Why it was not evaluated (unreadable, not a solution for this problem, over --candidates, no budget)."""


@dataclass(frozen=True)
class RoundReport:
    round: int
    agent: AgentOutcome | None
    """None when a resumed round's agent had already finished before the kill."""
    candidates: list[CandidateSummary]
    problem_edits: list[str]
    best: str | None
    best_reward: float | None
    budget_left: dict[str, Any]
    resumed: int = 0
    """Candidates of this round found in the journal, not evaluated again."""


@dataclass(frozen=True)
class OptimizeResult:
    workspace: Path
    rounds: list[RoundReport]
    best: str | None
    """Candidate id (``<round>-<k>``) of the best, None when no candidate was correct."""
    best_solution: Path | None
    final: dict[str, Any] | None
    """env.finalize's result, as JSON."""
    budget_left: dict[str, Any]
    resumed_candidates: int = 0
    stopped_because: str = ""


class OptimizeLoop:
    """One run: owns the env, the journal and the workspace; `run()` does the rounds."""

    def __init__(
        self,
        settings: OptimizeSettings,
        on_round: Callable[[RoundReport], None] | None = None,
        on_note: Callable[[str], None] | None = None,
    ):
        self.settings = settings
        self.on_round = on_round or (lambda report: None)
        self.on_note = on_note or (lambda message: None)
        self.workspace = Workspace(settings.workspace)
        self.journal = Journal(self.workspace.root / JOURNAL_FILE)
        self.memory = StrategyMemory(settings.memory or self.workspace.root / MEMORY_FILE)
        self.agent: Agent = agent_from_spec(settings.agent)  # a bad --agent fails before anything is made
        self._env: Env | None = None
        # set by run(), before anything reads them
        self.problem: Problem
        self.ledger: BudgetLedger
        self.env_ids: dict[int, str] = {}
        """env's candidate_id -> this run's ``<round>-<k>``."""
        self.last_feedback: list[dict[str, Any]] = []

    @property
    def env(self) -> Env:
        assert self._env is not None, "run() makes the env before anything reads it"
        return self._env

    # -- the run ------------------------------------------------------------------------------------------------
    def run(self) -> OptimizeResult:
        from solbench.optimize.env import make
        from solbench.spec import load_problem

        self.problem = load_problem(self.settings.problem)
        state = self._open_journal()
        for orphan in state.orphaned_agents:  # first: it may still be writing into its round folder
            if end_orphaned_group(orphan.process_group, orphan.start_ticks):
                self.on_note(
                    f"round {orphan.round}: ended its agent (process group {orphan.process_group}), "
                    f"left running when the loop was killed"
                )
        self.ledger = self._ledger()
        self._env = make(
            self.problem,
            hardware=self.settings.hardware,
            budget=self.ledger,
            config=self.settings.config,
            cache=self.settings.cache,
            held_out=self.settings.held_out,
            workspace=self.workspace.root,
            baselines=self.settings.baselines,
        )
        card = self.env.reset()
        if state.card is None:  # a resumed run keeps the card its agent started from
            state.card = CardRecord(card=to_json(card))
            self.journal.append(state.card)
        problem_files = self._problem_files(card)
        resumed = self._restore(state)
        reports: list[RoundReport] = []
        stopped = f"{self.settings.rounds} round(s) done"
        for round_number in range(state.next_round, self.settings.rounds + 1):
            if self._budget_exhausted():
                stopped = "budget exhausted"
                break
            if self.agent.is_finished(round_number, self.settings.candidates):
                stopped = f"{self.agent.name} has no more candidates"
                break
            if state.final is not None:
                raise WorkspaceError(
                    f"{self.journal.path}: this run was finalized after round {round_number - 1}: its held-out "
                    "workloads' results are in the workspace (best/result.json, the journal), where a further "
                    "round's agent could read them, so its rounds would no longer be measured on workloads it has "
                    "not seen. Start a new run in another --workspace (its candidates can seed the new agent)"
                )
            report = self._round(round_number, state, problem_files)
            reports.append(report)
            self.on_round(report)
        stored = state.final
        if not reports and stored is not None and stored.best == self._best()[0]:
            final = (stored.best, stored.result)  # a finished run, resumed with nothing left to do: not re-measured
        else:
            final = self._finalize(state)
        return OptimizeResult(
            workspace=self.workspace.root,
            rounds=reports,
            best=final[0],
            best_solution=self.workspace.best_dir / "solution.json" if final[0] else None,
            final=final[1],
            budget_left=to_json(self.env.budget_left),
            resumed_candidates=resumed,
            stopped_because=stopped,
        )

    def _open_journal(self) -> RunState:
        records = self.journal.read()
        state = run_state(records)
        digest = problem_sha256(Path(self.settings.problem))
        if state.run is not None:
            if not self.settings.resume:
                raise WorkspaceError(
                    f"{self.journal.path}: this workspace holds a run already; pass --resume to "
                    f"continue it, or choose another --workspace"
                )
            if state.run.problem_sha256 != digest:
                raise WorkspaceError(
                    f"{self.journal.path}: the run there is of another problem "
                    f"({state.run.problem}); choose another --workspace"
                )
        self.journal.open()
        if state.run is None:
            settings = self.settings
            state.run = RunRecord(
                problem=str(Path(settings.problem).resolve()),
                problem_sha256=digest,
                agent=settings.agent,
                rounds=settings.rounds,
                candidates=settings.candidates,
                budget_evals=settings.budget_evals,
                agent_timeout_s=settings.agent_timeout_s,
                settings=settings_to_json(settings),
            )
            self.journal.append(state.run)
        return state

    def _ledger(self) -> BudgetLedger:
        """The run's budget ledger: the loop charges `solbench test` calls journaled before a kill to it."""
        from solbench.optimize.budget import Budget, BudgetLedger

        return BudgetLedger(Budget(evals=self.settings.budget_evals, tests=self.settings.budget_tests))

    def _restore(self, state: RunState) -> int:
        """Re-seat every journaled step result in the env (no evaluation), and the last round's feedback."""
        from solbench.optimize.results import StepResult

        for test in state.tests:  # tests spent before the kill stay spent
            if test.result is not None:
                self.ledger.charge("test", float(test.result.get("seconds", 0.0)), bool(test.result.get("cache_hit")))
        evaluated = state.evaluated
        if evaluated:
            results = [StepResult.model_validate(record.result) for record in evaluated]
            self.env.restore(results)  # the env numbers restored candidates 1, 2, … in this order
            for position, record in enumerate(evaluated, 1):
                self.env_ids[position] = record.candidate_id
            self.on_note(f"resumed: {len(evaluated)} candidate(s) from the journal, not evaluated again")
            last_round = max(record.round for record in evaluated)
            self.last_feedback = [_feedback_entry(r) for r in state.candidates.values() if r.round == last_round]
        return len(evaluated)

    # -- one round ----------------------------------------------------------------------------------------------
    def _round(self, round_number: int, state: RunState, problem_files: ProblemFiles) -> RoundReport:
        folder = self.workspace.round_dir(round_number)
        outcome: AgentOutcome | None = None
        edits: list[str] = []
        if not state.agent_done(round_number) or not folder.is_dir():
            outcome, edits = self._run_agent(round_number, problem_files)
        summaries: list[CandidateSummary] = []
        resumed = 0
        entries: list[dict[str, Any]] = []
        for candidate in candidate_files(folder):
            candidate_id = f"{round_number}-{candidate.k}"
            if candidate_id in state.candidates:
                resumed += 1
                entries.append(_feedback_entry(state.candidates[candidate_id]))
                continue
            record = self._evaluate(round_number, candidate, folder)
            state.candidates[candidate_id] = record
            summaries.append(_summary(record))
            entries.append(_feedback_entry(record))
        if outcome is not None:
            entries.insert(0, {"agent": _agent_note(outcome), "problem_edits": edits})
        self.last_feedback = entries
        best_id, best_reward = self._best()
        budget_left = to_json(self.env.budget_left)
        self.journal.append(
            RoundFinished(round=round_number, best=best_id, best_reward=best_reward, budget_left=budget_left)
        )
        return RoundReport(
            round=round_number,
            agent=outcome,
            candidates=summaries,
            problem_edits=edits,
            best=best_id,
            best_reward=best_reward,
            budget_left=budget_left,
            resumed=resumed,
        )

    def _run_agent(self, round_number: int, problem_files: ProblemFiles) -> tuple[AgentOutcome, list[str]]:
        budget_left = to_json(self.env.budget_left)
        hashes = self.workspace.prepare_round(
            round_number,
            problem_files,
            self.last_feedback,
            self.memory.lines_for(problem_files.definition.get("op_type", "")),
            budget_left,
        )
        folder = self.workspace.round_dir(round_number)
        self.journal.append(RoundStarted(round=round_number, budget_left=budget_left))
        server = ChannelServer(folder, lambda request: self._answer_test(round_number, request))
        server.open(round_number)
        try:
            outcome = self.agent.propose(
                folder,
                round_number=round_number,
                candidates=self.settings.candidates,
                environment=self._agent_environment(round_number, folder, budget_left),
                timeout_s=self.settings.agent_timeout_s,
                log_path=self.workspace.round_log(round_number),
                serve=server.serve,
                on_start=lambda pid: self.journal.append(
                    AgentStarted(round=round_number, process_group=pid, start_ticks=process_start_ticks(pid))
                ),
            )
        finally:
            server.close()
        files = [str(c.path) for c in candidate_files(folder)]
        self.journal.append(
            AgentFinished(
                round=round_number,
                exit_code=outcome.exit_code,
                timed_out=outcome.timed_out,
                seconds=round(outcome.seconds, 3),
                output_tail=outcome.output_tail,
                wrote=files,
            )
        )
        edits = changed_problem_files(folder, hashes)
        if edits:
            self.journal.append(ProblemEdited(round=round_number, files=edits))
            self.on_note(
                f"round {round_number}: the agent changed problem/ ({', '.join(edits)}); recorded, "
                f"scoring uses the true problem"
            )
        return outcome, edits

    def _agent_environment(self, round_number: int, folder: Path, budget_left: dict[str, Any]) -> dict[str, str]:
        environment = dict(os.environ)
        evals = budget_left.get("evals")
        environment.update(
            {
                ROUND_VARIABLE: str(round_number),
                WORKSPACE_VARIABLE: str(folder.resolve()),
                BUDGET_VARIABLE: "unlimited" if evals is None else str(evals),
                DEVICE_VARIABLE: (self.settings.config or EvaluationConfig()).resolved().device,
            }
        )
        return environment

    def _evaluate(self, round_number: int, candidate, folder: Path) -> CandidateRecord:
        from solbench.errors import SolbenchError
        from solbench.spec import Solution

        base = {"round": round_number, "k": candidate.k, "file": str(candidate.path)}
        if candidate.k > self.settings.candidates:
            over = f"over --candidates {self.settings.candidates}: not evaluated"
            return self._journal_candidate(CandidateRecord(**base, error=over))
        try:
            data = json.loads((folder / candidate.path).read_text())
            solution = Solution.model_validate(data)
        except (OSError, ValueError, RecursionError) as error:  # RecursionError: JSON nested too deep
            message = str(error).splitlines()[0] if str(error) else type(error).__name__
            return self._journal_candidate(CandidateRecord(**base, error=f"not a solution: {message}"))
        technique = stated_technique(candidate.technique, solution.description)
        try:
            result = self.env.step(solution)
        except SolbenchError as error:  # no budget left, not a solution for this problem (InvalidCandidate), or one
            # the evaluator refuses before running it: nothing measured, journaled, and the loop goes on
            return self._journal_candidate(CandidateRecord(**base, solution=data, error=str(error)))
        record = CandidateRecord(
            **base,
            solution=data,
            result=to_json(result),
            technique=technique,
            traces=self._cached_traces(result.info.cache_key),
        )
        self.env_ids[result.info.candidate_id] = record.candidate_id
        self._journal_candidate(record)
        self.workspace.record_candidate(record.candidate_id, data, _feedback_entry(record))
        best_id, _ = self._best()
        if best_id == record.candidate_id:
            self.workspace.record_best(record.candidate_id, data, _feedback_entry(record))
        self._remember(record, result)
        return record

    def _cached_traces(self, key: str | None) -> list[dict[str, Any]] | None:
        """The traces the result cache stored for this evaluation (the env's step result carries feedback only)."""
        from solbench.evaluation.result_cache import CacheEntry, ResultCache

        if key is None or self.env.cache is None:
            return None
        try:
            entry = CacheEntry.model_validate_json(ResultCache(self.env.cache).path_of(key).read_bytes())
        except (OSError, ValueError):
            return None
        return [trace.model_dump(mode="json") for trace in entry.traces]

    def _journal_candidate(self, record: CandidateRecord) -> CandidateRecord:
        self.journal.append(record)
        return record

    def _remember(self, record: CandidateRecord, result) -> None:
        """A strategy record for a correct, unflagged candidate: the loop's own measurement of its gain."""
        if result.info.flagged_cheat or not result.info.correct:
            return
        gain = speedup_reward(result.feedback)  # every workload passed: the geometric mean of T_b / T_k
        if not gain:
            return
        solution = record.solution or {}
        self.memory.add(
            StrategyRecord(
                family=self.problem.definition.op_type or self.problem.definition.name,
                problem=self.problem.definition.name,
                technique=record.technique or f"unstated (solution {solution.get('name', record.candidate_id)})",
                gain=round(gain, 4),
                reward=result.reward,
                hardware=self.settings.hardware,
                candidate=record.candidate_id,
                run=str(self.workspace.root.resolve()),
            )
        )

    def _answer_test(self, round_number: int, request: dict[str, Any]) -> dict[str, Any]:
        """A `solbench test` request from the round folder: env.test, journaled, charged to the run's budget."""
        from solbench.errors import SolbenchError
        from solbench.spec import Solution

        try:
            solution = Solution.model_validate(request.get("solution"))
        except ValueError as error:
            return {"error": f"{request.get('file', 'solution')}: not a solution: {str(error).splitlines()[0]}"}
        try:
            result = self.env.test(solution, seed=request.get("seed"), workload=request.get("workload"))
        except SolbenchError as error:  # no test budget left, a bad seed or workload, …
            self.journal.append(TestRecord(round=round_number, solution_name=solution.name, error=str(error)))
            return {"error": str(error)}
        self.journal.append(TestRecord(round=round_number, solution_name=solution.name, result=to_json(result)))
        return {"result": to_json(result), "budget_left": to_json(self.env.budget_left)}

    # -- best and the end ---------------------------------------------------------------------------------------
    def _best(self) -> tuple[str | None, float | None]:
        best = self.env.best
        if best is None:
            return None, None
        return self.env_ids.get(best.candidate_id), best.reward

    def _budget_exhausted(self) -> bool:
        return bool(self.env.budget_left.exhausted)

    def _finalize(self, state: RunState) -> tuple[str | None, dict[str, Any] | None]:
        best_id, _ = self._best()
        if best_id is None:
            self.journal.append(FinalRecord(best=None, result=None))
            return None, None
        result = self.env.finalize()  # the best, or the next best correct one where the best failed (says so)
        final = to_json(result)
        if result.note:
            self.on_note(f"final: {result.note}")
        best_id = self.env_ids.get(result.candidate_id, best_id) if result.candidate_id is not None else best_id
        record = state.candidates.get(best_id)  # kept up to date by every round: no second read of the journal
        if record is not None and record.solution is not None:
            self.workspace.record_best(best_id, record.solution, _feedback_entry(record))
        write_json_atomically(self.workspace.best_dir / "result.json", {"candidate": best_id, **final})
        self.journal.append(FinalRecord(best=best_id, result=final))
        return best_id, final

    def _problem_files(self, card) -> ProblemFiles:
        """The round folder's problem/: the card's public workloads as their original workload.jsonl lines."""
        public = {w.uuid for w in card.workloads}
        lines = (Path(self.settings.problem) / "workload.jsonl").read_text().splitlines()
        workloads = [json.loads(line) for line in lines if line.strip()]
        definition = json.loads((Path(self.settings.problem) / "definition.json").read_text())
        sol = {
            "hardware": card.hardware.id,
            "workloads": [
                {
                    "workload": w.uuid,
                    "t_sol_ms": w.t_sol_ms,
                    "bound": w.bound,
                    "t_b_ms": w.t_b_ms,
                    "t_b_source": w.t_b_source,
                }
                for w in card.workloads
            ],
        }
        return ProblemFiles(
            definition=definition,
            workloads=[w for w in workloads if w.get("uuid") in public],
            sol=sol,
            hardware={
                **card.model_dump(mode="json", include={"hardware"})["hardware"],
                "device": card.device,
                "languages": card.languages,
            },
            guide=guide_files(card.contract, card.definition),
        )


def run_optimize(
    settings: OptimizeSettings,
    on_round: Callable[[RoundReport], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> OptimizeResult:
    """Run (or with `settings.resume`, continue) an optimisation; see OptimizeLoop."""
    loop = OptimizeLoop(settings, on_round, on_note)
    try:
        return loop.run()
    finally:
        if loop._env is not None:  # None where run() failed before making it
            loop._env.close()  # the spare sandbox kept warm for a next candidate


def _summary(record: CandidateRecord) -> CandidateSummary:
    result = record.result or {}
    statuses: dict[str, int] = {}
    for feedback in result.get("feedback", []):
        statuses[feedback["status"]] = statuses.get(feedback["status"], 0) + 1
    info = result.get("info", {})
    return CandidateSummary(
        candidate_id=record.candidate_id,
        file=record.file,
        reward=result.get("reward"),
        statuses=statuses,
        flagged_cheat=bool(info.get("flagged_cheat")),
        cache_hit=bool(info.get("cache_hit")),
        error=record.error,
    )


def _feedback_entry(record: CandidateRecord) -> dict[str, Any]:
    """What the next round's agent reads about a candidate (feedback.json, history/<id>/feedback.json)."""
    result = record.result or {}
    info = result.get("info", {})
    return {
        "candidate": record.candidate_id,
        "file": record.file,
        "technique": record.technique,
        "reward": result.get("reward"),
        "flagged_cheat": info.get("flagged_cheat", False),
        "error": record.error,
        "feedback": result.get("feedback", []),
    }


def _agent_note(outcome: AgentOutcome) -> str:
    if outcome.timed_out:
        return f"killed after {outcome.seconds:.0f} s (past --agent-timeout)"
    if outcome.exit_code:
        return f"exited with status {outcome.exit_code}"
    return "exited normally"
