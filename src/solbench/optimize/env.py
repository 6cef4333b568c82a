"""The optimisation environment: a problem, a budget, and a record of every candidate an agent tries.

`make` builds one; `reset` gives the problem card, `step` evaluates a candidate on the public
workloads and returns its reward and feedback, `test` checks correctness cheaply, `best` is the
best correct and compliant candidate, and `finalize` re-measures it on every workload, held-out
ones included. Everything measured goes through the public API (`solbench.api.evaluate`) and its
result cache, so a candidate evaluated before costs nothing.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import replace
from numbers import Integral
from os import PathLike
from pathlib import Path
from typing import Any

from solbench import api
from solbench.evaluation.config import MAX_INPUT_SEED, EvaluationConfig
from solbench.evaluation.environment import device_name
from solbench.evaluation.pool import SandboxPool
from solbench.hardware import HardwareSpec, lookup
from solbench.optimize.budget import Budget, BudgetLedger, BudgetLeft
from solbench.optimize.card import ProblemCard, languages_for, workload_card
from solbench.optimize.contract import solution_contract
from solbench.optimize.env_state import EnvState, WorkloadTimes
from solbench.optimize.errors import (
    AlreadyFinalized,
    InvalidCandidate,
    InvalidSeed,
    RestoreMismatch,
    StateMismatch,
    UnknownWorkload,
)
from solbench.optimize.feedback import CHEAT, PASSED, WorkloadFeedback, workload_feedback
from solbench.optimize.held_out import HeldOut, split_workloads
from solbench.optimize.pinned_t_b import PinnedTimes, pin_keys
from solbench.optimize.results import Candidate, FinalResult, StepInfo, StepResult, TestResult, TestStatus
from solbench.optimize.rewards import check_reward, reward_of
from solbench.optimize.solution_templates import solution_template
from solbench.optimize.workloads import restricted, smallest
from solbench.scoring import Baseline, Baselines, as_baselines, score_trace
from solbench.spec.packaging import reference_solution
from solbench.spec.problem import Problem
from solbench.spec.solution import Solution
from solbench.spec.trace import Trace
from solbench.spec.workload import Workload

PathArg = str | PathLike[str]
CandidateArg = Solution | dict | PathArg

ENV_REFERENCE_SOURCE = "reference timed once by this environment"
DEFAULT_FALLBACKS = 3
"""How many candidates after the best `finalize` re-measures, in turn, when the best fails its re-measurement."""


def make(
    problem: Problem | PathArg,
    *,
    hardware: str | HardwareSpec = "local",
    budget: Budget | BudgetLedger | None = None,
    reward: str = "sol",
    cache: PathArg | None = None,
    config: EvaluationConfig | None = None,
    held_out: HeldOut = None,
    workspace: PathArg | None = None,
    baselines: Baselines | PathArg | None = None,
    warm_sandboxes: bool = True,
    pin_t_b: bool = True,
    profile: bool = False,
) -> Env:
    """An environment for `problem` (a folder or a loaded Problem); see `Env` for each argument."""
    return Env(
        problem,
        hardware=hardware,
        budget=budget,
        reward=reward,
        cache=cache,
        config=config,
        held_out=held_out,
        workspace=workspace,
        baselines=baselines,
        warm_sandboxes=warm_sandboxes,
        pin_t_b=pin_t_b,
        profile=profile,
    )


class Env:
    """One problem to optimise, gym-style.

    - `hardware`: T_SOL is computed for it (`"local"` is this CPU's stored probe).
    - `budget`: a Budget, or a BudgetLedger shared with other environments (the MCP server's).
    - `reward`: ``sol`` (default), ``speedup``, ``log_speedup`` or ``gated_sol`` (see rewards.py).
    - `cache`: a result-cache folder; a candidate evaluated before is answered from it for free.
      Without one, ``<workspace>/cache`` when `workspace` is given, else no cache.
    - `config`: the EvaluationConfig candidates run under (default: the CLI's). The reference is
      not timed beside each candidate: T_b comes from `baselines`, else from the T_b pinned for this
      problem, machine and timing settings (pinned_t_b.py), else from timing the reference once, here.
    - `held_out`: None for the default rule (held_out.py), a fraction, or a list of workload uuids.
    - `warm_sandboxes`: keep a spare sandbox started (confined, torch imported, no solution ever
      loaded) so the next candidate skips the sandbox's start-up; it warms up while the agent thinks.
      Used from the thread that made the first evaluation (a spare dies with the thread that started
      it); `close()` stops it.
    - `pin_t_b`: read and write pinned T_b (``$SOLBENCH_CACHE_DIR/t_b``), so every environment on this machine
      compares a kernel with the same T_b; False times the reference for this environment alone.
    - `profile`: each step's feedback says where the candidate's time went (top ops and their share, from
      torch.profiler on untimed calls after the timed loop); off by default, as it costs a few calls per workload.
    """

    def __init__(
        self,
        problem: Problem | PathArg,
        *,
        hardware: str | HardwareSpec = "local",
        budget: Budget | BudgetLedger | None = None,
        reward: str = "sol",
        cache: PathArg | None = None,
        config: EvaluationConfig | None = None,
        held_out: HeldOut = None,
        workspace: PathArg | None = None,
        baselines: Baselines | PathArg | None = None,
        warm_sandboxes: bool = True,
        pin_t_b: bool = True,
        profile: bool = False,
    ):
        self._problem = problem if isinstance(problem, Problem) else api.load_problem(problem)
        self._hardware = lookup(hardware) if isinstance(hardware, str) else hardware
        self._ledger = budget if isinstance(budget, BudgetLedger) else BudgetLedger(budget)
        self.reward = check_reward(reward)
        self.workspace = Path(workspace) if workspace is not None else None
        self.cache = Path(cache) if cache is not None else (self.workspace / "cache" if self.workspace else None)
        self._config = replace(config or EvaluationConfig(), time_reference=False)
        if profile:
            self._config = replace(self._config, profile=True)
        self._public, self._held_out = split_workloads(self._problem, held_out)
        self._baselines = as_baselines(baselines)
        self._pins = PinnedTimes() if pin_t_b else None
        self._times: dict[str, tuple[float, str, float | None, str]] = {}
        """workload uuid -> (T_SOL ms, bound, T_b ms, T_b source), filled per workload when first needed."""
        self._results: list[StepResult] = []
        self._final: FinalResult | None = None
        """The first `finalize`'s result: the environment is over (see `finalize`)."""
        self._seed: int | None = None
        self._warm_sandboxes = warm_sandboxes
        self._pool: SandboxPool | None = None
        self._pool_thread: int | None = None

    # What an agent may see.

    @property
    def problem(self) -> str:
        return self._problem.name

    @property
    def public_workloads(self) -> tuple[Workload, ...]:
        return self._public

    @property
    def problem_card(self) -> ProblemCard:
        """The card `reset` returns (T_SOL and T_b are worked out on first use, once)."""
        self._prepare(self._public)
        definition = self._problem.definition
        cards = [workload_card(w, self._problem.axes_of(w), *self._times[w.uuid]) for w in self._public]
        return ProblemCard(
            problem=self.problem,
            definition=definition,
            reference_source=definition.reference,
            workloads=cards,
            held_out_workloads=len(self._held_out),
            hardware=self._hardware,
            device=self._device,
            languages=languages_for(self._device),
            reward=self.reward,
            contract=solution_contract(self._problem, self._public, self._device, self._config.precision),
            budget_left=self.budget_left,
            seed=self._seed,
        )

    def solution_template(self, language: str = "pytorch", style: str = "value") -> Solution:
        """A valid solution to start from, in `language` (pytorch, triton, cpp, cuda) and `style` (value, dps):
        the Python ones call the reference and pass as written (solution_templates.py). Costs nothing."""
        return solution_template(self._problem.definition, language, style, self._device)

    @property
    def budget_left(self) -> BudgetLeft:
        return self._ledger.left()

    @property
    def history(self) -> list[Candidate]:
        return [Candidate.of(result) for result in self._results]

    @property
    def results(self) -> list[StepResult]:
        """Every StepResult so far, restored ones included: what `restore` takes back."""
        return list(self._results)

    @property
    def best(self) -> Candidate | None:
        """The correct, unflagged candidate with the highest reward (the earliest among equals), or None."""
        best = None
        for result in self._results:
            if result.info.correct and not result.info.flagged_cheat and (best is None or result.reward > best.reward):
                best = result
        return Candidate.of(best) if best else None

    # The gym-style calls.

    def reset(self, seed: int | None = None) -> ProblemCard:
        """The problem card. History, best and budget are the environment's and stay as they are; without a
        seed the card keeps the last one given."""
        if seed is not None:
            self._seed = seed
        return self.problem_card

    def step(self, solution: CandidateArg) -> StepResult:
        """Evaluate a candidate on the public workloads: reward, per-workload feedback, done, info.

        Raises InvalidCandidate (nothing run, nothing charged) for what is not a solution of this
        problem, BudgetExhausted when no evaluation is left.
        """
        candidate = self._candidate(solution)
        self._check_open()
        with self._ledger.spending("eval") as settle:
            self._prepare(self._public)
            traces, seconds, hit, key = self._evaluate(
                restricted(self._problem, self._public), candidate, self._config, self.cache
            )
            settle(seconds, hit)
        feedback = self._feedback(traces)
        flagged = any(item.status == CHEAT for item in feedback)
        correct = all(item.status == PASSED for item in feedback)
        reward = reward_of(self.reward, feedback)
        best = self.best
        is_best = correct and not flagged and (best is None or reward > best.reward)
        info = StepInfo(
            candidate_id=len(self._results) + 1,
            cache_hit=hit,
            cache_key=key,
            flagged_cheat=flagged,
            correct=correct,
            is_best=is_best,
            seconds=round(seconds, 3),
            budget_left=self.budget_left,
        )
        result = StepResult(
            problem=self.problem,
            reward_kind=self.reward,
            reward=reward,
            feedback=feedback,
            done=self._ledger.exhausted,
            info=info,
            solution=candidate,
        )
        self._results.append(result)
        return result

    def test(self, solution: CandidateArg, *, seed: int | None = None, workload: str | None = None) -> TestResult:
        """Correctness only, nothing timed: cheap, never scored, never `best`. On the smallest public workloads, or
        on the public `workload` named. Inputs come from a fresh secret seed, or from `seed` (a failure's
        `input_seed`), so the inputs a candidate failed on can be replayed; every status reports its seed."""
        candidate = self._candidate(solution)
        whole = isinstance(seed, Integral) and not isinstance(seed, bool)  # "abc" was a TypeError, not InvalidSeed
        if seed is not None and not (whole and 0 <= seed < MAX_INPUT_SEED):
            raise InvalidSeed(seed, MAX_INPUT_SEED)
        workloads = self._tested(workload)
        self._check_open()
        config = replace(self._config, time_solution=False, input_seed=seed)
        with self._ledger.spending("test") as settle:
            traces, seconds, hit, _ = self._evaluate(
                restricted(self._problem, workloads), candidate, config, self.cache
            )
            settle(seconds, hit)
        feedback = workload_feedback(traces, [score_trace(t, None, None, None) for t in traces])
        statuses = [
            TestStatus(
                workload=f.workload,
                status=f.status,
                failed_rule=f.failed_rule,
                error=f.error,
                same_error_as=f.same_error_as,
                input_seed=f.input_seed,
                log=f.log,
                same_log_as=f.same_log_as,
            )
            for f in feedback
        ]
        return TestResult(
            passed=all(s.status == PASSED for s in statuses),
            workloads=statuses,
            cache_hit=hit,
            seconds=round(seconds, 3),
            budget_left=self.budget_left,
        )

    def finalize(self, *, fallbacks: int = DEFAULT_FALLBACKS) -> FinalResult:
        """The best candidate re-measured on every workload, held-out ones included: no cache, so the
        evaluator draws fresh secret inputs. Costs no budget. With no correct candidate, nothing is run.

        When the best fails the re-measurement (a held-out workload, a failure its public inputs hid), the next
        best correct candidates are re-measured in turn, up to `fallbacks` more (each distinct solution once):
        the first that passes every workload is the result, and `tried` and `note` say which failed before it.
        When none does, the best's re-measurement is returned, failing.

        The first finalize ends the environment, as the service's does: its held-out workloads have been measured,
        so a later `finalize` answers the same result without measuring, and `step` and `test` raise AlreadyFinalized.
        (A `snapshot` does not carry this: a store keeps its environments' final results itself.)
        """
        if self._final is None:
            self._final = self._final_result(fallbacks)
        return self._final

    def _final_result(self, fallbacks: int) -> FinalResult:
        ranked = self._ranked()
        held_out = [w.uuid for w in self._held_out]
        if not ranked:
            failing = reward_of(self.reward, [])
            return FinalResult(
                problem=self.problem,
                candidate_id=None,
                reward_kind=self.reward,
                reward=failing,
                public_reward=failing,
                held_out_reward=None if not held_out else failing,
                correct=False,
                flagged_cheat=False,
                feedback=[],
                held_out=held_out,
                traces=[],
                note="no correct candidate to re-measure",
            )
        self._prepare(self._problem.workloads)
        failed: list[FinalResult] = []
        for candidate in ranked[: 1 + max(fallbacks, 0)]:
            result = self._remeasure(candidate, held_out)
            if result.correct and not result.flagged_cheat:
                return result.model_copy(
                    update={
                        "tried": [f.candidate_id for f in failed] + [candidate.candidate_id],
                        "note": _fell_back(failed),
                    }
                )
            failed.append(result)
        note = _fell_back(failed) + f"; none of the {len(failed)} re-measured candidate(s) passed every workload"
        return failed[0].model_copy(update={"tried": [f.candidate_id for f in failed], "note": note})

    def _ranked(self) -> list[Candidate]:
        """The correct, unflagged candidates, best first (the earliest among equal rewards), each solution once."""
        ranked, seen = [], set()
        for result in sorted(self._results, key=lambda r: (-r.reward, r.info.candidate_id)):
            material = result.solution.model_dump_json(include={"definition", "spec", "sources"})
            if result.info.correct and not result.info.flagged_cheat and material not in seen:
                seen.add(material)
                ranked.append(Candidate.of(result))
        return ranked

    def _remeasure(self, candidate: Candidate, held_out: list[str]) -> FinalResult:
        traces, _, _, _ = self._evaluate(self._problem, candidate.solution, self._config, None)
        feedback = self._feedback(traces)
        public = [f for f in feedback if f.workload not in held_out]
        hidden = [f for f in feedback if f.workload in held_out]
        return FinalResult(
            problem=self.problem,
            candidate_id=candidate.candidate_id,
            solution=candidate.solution,
            reward_kind=self.reward,
            reward=reward_of(self.reward, feedback),
            public_reward=reward_of(self.reward, public),
            held_out_reward=reward_of(self.reward, hidden) if hidden else None,
            correct=all(f.status == PASSED for f in feedback),
            flagged_cheat=any(f.status == CHEAT for f in feedback),
            feedback=feedback,
            held_out=held_out,
            traces=traces,
        )

    def restore(self, records: Sequence[StepResult | dict[str, Any]]) -> None:
        """Re-seat earlier step results (a journal) without evaluating: history, best and budget spent follow."""
        for index, record in enumerate(records):
            result = record if isinstance(record, StepResult) else StepResult.model_validate(record)
            if result.problem != self.problem:
                raise RestoreMismatch(index, f"made for problem {result.problem!r}, not {self.problem!r}")
            if result.reward_kind != self.reward:
                raise RestoreMismatch(
                    index, f"reward {result.reward_kind!r}, but this environment's is {self.reward!r}"
                )
            self._ledger.charge("eval", result.info.seconds, result.info.cache_hit)
            info = result.info.model_copy(update={"candidate_id": len(self._results) + 1})
            self._results.append(result.model_copy(update={"info": info}))

    def snapshot(self) -> EnvState:
        """What this environment has learnt and spent, for a store to keep between calls (env_state.py)."""
        return EnvState(
            problem=self.problem,
            reward=self.reward,
            results=list(self._results),
            spent=self.budget_left,
            times={
                uuid: WorkloadTimes(t_sol_ms=t_sol, bound=bound, t_b_ms=t_b, t_b_source=source)
                for uuid, (t_sol, bound, t_b, source) in self._times.items()
            },
            seed=self._seed,
        )

    def resume(self, state: EnvState) -> None:
        """Continue from a `snapshot()` of an environment with this problem, reward and budget: history, best,
        spending, T_SOL, T_b and seed are the snapshot's; nothing is evaluated."""
        if state.problem != self.problem or state.reward != self.reward:
            raise StateMismatch(f"{state.problem}/{state.reward}", f"{self.problem}/{self.reward}")
        self._results = list(state.results)
        self._ledger.resume(state.spent)
        self._times = {uuid: (t.t_sol_ms, t.bound, t.t_b_ms, t.t_b_source) for uuid, t in state.times.items()}
        self._seed = state.seed

    def close(self) -> None:
        """Stop the spare sandbox kept warm for the next candidate (the environment still works: later
        evaluations start their own)."""
        if self._pool is not None:
            self._pool.close()
        self._warm_sandboxes = False

    def __enter__(self) -> Env:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def warm_spares(self) -> list[int]:
        """Process ids of the spare sandboxes waiting for the next candidate (none before the first evaluation)."""
        return self._pool.ready_pids if self._pool is not None else []

    # Internals.

    def _sandboxes(self) -> SandboxPool | None:
        """The pool of warm spares, made on the first evaluation, for evaluations from that thread only."""
        if not self._warm_sandboxes:
            return None
        if self._pool is None:
            self._pool = SandboxPool.for_config(self._config)
            self._pool_thread = threading.get_ident()
            weakref.finalize(self, self._pool.close)  # an env dropped without close() leaves no process behind
        return self._pool if threading.get_ident() == self._pool_thread else None

    @property
    def _device(self) -> str:
        return self._config.resolved().device

    def _check_open(self) -> None:
        if self._final is not None:
            raise AlreadyFinalized(self.problem)

    def _candidate(self, solution: CandidateArg) -> Solution:
        if isinstance(solution, Solution):
            candidate = solution
        elif isinstance(solution, dict):
            candidate = _validated(solution, "solution")
        else:
            candidate = api.load_solution(solution)
        if candidate.definition != self.problem:
            raise InvalidCandidate("solution.definition", f"{candidate.definition!r}: this problem is {self.problem!r}")
        return candidate

    def _tested(self, workload: str | None) -> tuple[Workload, ...]:
        if workload is None:
            return smallest(self._problem, self._public)
        chosen = tuple(w for w in self._public if w.uuid == workload)
        if not chosen:
            raise UnknownWorkload(workload, [w.uuid for w in self._public])
        return chosen

    def _evaluate(
        self, problem: Problem, solution: Solution, config: EvaluationConfig, cache: Path | None
    ) -> tuple[list[Trace], float, bool, str | None]:
        start = time.perf_counter()
        traces = api.evaluate(problem, solution, config=config, cache=cache, sandboxes=self._sandboxes())
        seconds = time.perf_counter() - start
        record = None
        if traces:
            evaluation = traces[0].evaluation
            assert evaluation is not None, "api.evaluate returns evaluated traces"
            record = evaluation.solbench.cache if evaluation.solbench else None
        return traces, seconds, bool(record and record.hit), record.key if record else None

    def _feedback(self, traces: list[Trace]) -> list[WorkloadFeedback]:
        baselines = Baselines(
            [
                Baseline(
                    definition=self.problem, workload=uuid, hardware=self._hardware.id, latency_ms=t_b, source=source
                )
                for uuid, (_, _, t_b, source) in self._times.items()
                if t_b
            ]
        )
        scores = [
            score_trace(
                t, self._times[t.workload.uuid][0], baselines, self._hardware.id, self._times[t.workload.uuid][1]
            )
            for t in traces
        ]
        return workload_feedback(traces, scores, {uuid: times[3] for uuid, times in self._times.items()})

    def _prepare(self, workloads: tuple[Workload, ...]) -> None:
        """T_SOL and T_b for `workloads` not yet known: analysed, looked up in the baselines, or the reference timed."""
        missing = tuple(w for w in workloads if w.uuid not in self._times)
        if not missing:
            return
        t_sols = {
            s.workload.uuid: s
            for s in api.analyze(restricted(self._problem, missing), self._hardware, data_roots=self._config.data_roots)
        }
        t_bs = self._baseline_times(missing)
        for workload in missing:
            sol = t_sols[workload.uuid]
            self._times[workload.uuid] = (sol.t_sol_ms, sol.bound, *t_bs[workload.uuid])

    def _baseline_times(self, workloads: tuple[Workload, ...]) -> dict[str, tuple[float | None, str]]:
        """T_b and its source per workload: the baselines file's entry, else the pinned timing (pinned_t_b.py),
        else the reference timed now (and pinned, unless `pin_t_b` is off)."""
        found: dict[str, tuple[float | None, str]] = {}
        for workload in workloads:
            entry = self._baselines.get(self.problem, workload.uuid, self._hardware.id) if self._baselines else None
            if entry is not None:
                found[workload.uuid] = (entry.latency_ms, f"baselines file: {entry.source}")
        unfound = [w for w in workloads if w.uuid not in found]
        keys = pin_keys(self._problem, unfound, self._config.resolved()) if self._pins and unfound else {}
        for uuid, key in keys.items():
            pinned = self._pins.get(key) if self._pins else None
            if pinned is not None:
                found[uuid] = (pinned.latency_ms, pinned.source)
        untimed = tuple(w for w in workloads if w.uuid not in found)
        if untimed:
            # The reference's timing is the environment's own cost: no budget is charged for it.
            reference = reference_solution(self._problem.definition, self._config.resolved().device)
            traces = api.evaluate(
                restricted(self._problem, untimed),
                reference,
                config=replace(self._config, profile=False),
                cache=self.cache,
                sandboxes=self._sandboxes(),
            )
            for trace in traces:
                evaluation = trace.evaluation
                assert evaluation is not None, "api.evaluate returns evaluated traces"
                performance = evaluation.performance
                uuid = trace.workload.uuid
                if performance is None:
                    found[uuid] = (None, f"the reference did not pass here ({evaluation.status.value})")
                elif self._pins is None:
                    found[uuid] = (performance.latency_ms, ENV_REFERENCE_SOURCE)
                else:
                    pinned = self._pins.pin(keys[uuid], performance.latency_ms, device_name(self._device))
                    found[uuid] = (pinned.latency_ms, pinned.source)
        return found


def _fell_back(failed: Sequence[FinalResult]) -> str:
    """What the re-measurements before the result found: which candidate failed where ("" when none did)."""
    parts = []
    for result in failed:
        failures = [
            f"{f.workload}{' (held out)' if f.workload in result.held_out else ''}: {f.status}"
            for f in result.feedback
            if f.status != PASSED
        ]
        parts.append(f"candidate {result.candidate_id} failed the re-measurement ({', '.join(failures[:3])})")
    if not parts:
        return ""
    return "; ".join(parts) + "; fell back to the next best correct candidate"


def _validated(data: dict, where: str) -> Solution:
    from pydantic import ValidationError

    try:
        return Solution.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"])
        raise InvalidCandidate(f"{where}.{field}" if field else where, first["msg"]) from None


def solution_from_text(text: str) -> Solution:
    """A solution from its JSON text (the gymnasium action, an MCP argument); InvalidCandidate when it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: nested too deep for the parser
        raise InvalidCandidate("solution", f"not JSON ({error})") from None
    if not isinstance(data, dict):
        raise InvalidCandidate("solution", "must be a JSON object")
    return _validated(data, "solution")
