"""The trusted orchestrator: one sandbox per solution, one trace per workload, whatever happens.

Per workload: secret-seeded inputs for several rounds, reference (and float64 golden) outputs
here in the parent, the solution's outputs from the sandbox checked round by round, then a timed
loop in the sandbox whose sampled outputs are checked too (golden included), and the reference
timed the same way.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from solbench.evaluation.config import EvaluationConfig, check_device_available
from solbench.evaluation.correctness import (
    ExpectedOutput,
    LowerRuns,
    Verdict,
    check_outputs,
    check_structure,
    reference_problem,
)
from solbench.evaluation.device_turn import DeviceLock
from solbench.evaluation.environment import clock_state, device_name, library_versions
from solbench.evaluation.errors import EvaluationError, MemoryLimitError
from solbench.evaluation.orders import half_plan, in_both_orders
from solbench.evaluation.outcome import RunContext, make_trace, profile_summary, timing_summary
from solbench.evaluation.pool import SandboxPool
from solbench.evaluation.reference import ReferenceFailure, ReferenceProgram
from solbench.evaluation.reference_timing import ReferenceTimings, problem_timing_key, workload_timing_key
from solbench.evaluation.roles import timing_perturbations
from solbench.evaluation.session import SandboxFailure, SandboxLimits, SandboxSession
from solbench.evaluation.torch_settings import running_as, sandbox_settings
from solbench.guard import Severity, blocking, check_solution
from solbench.sandbox.measure import TimingPlan
from solbench.sandbox.protocol import (
    FAILURES,
    BuildRequest,
    Called,
    CallRequest,
    FreshInput,
    GuardTripped,
    LoadRequest,
    OutputDescription,
    OutputRejected,
    Profiled,
    ProfileRequest,
    RequestRejected,
    Timed,
    TimeRequest,
)
from solbench.sandbox.rotation import perturbed_inputs
from solbench.spec.distribution import DistributionCheck
from solbench.spec.errors import MissingDataError, SpecError
from solbench.spec.inputs import InputContext, generate_inputs
from solbench.spec.problem import Problem, check_data_files
from solbench.spec.solution import Solution
from solbench.spec.trace import CheckOutcome, Environment, EvaluationStatus, ProfileSummary, Trace
from solbench.spec.workload import Workload

PROFILE_CALLS = 3
"""Untimed calls profiled per workload (EvaluationConfig.profile): enough to leave first-call costs a minority."""
PROFILE_TOP_OPS = 10
ProgressCallback = Callable[[int, int, str], None]
"""(workloads done, workloads total, what is happening now)."""

_FAILURE_STATUS = {
    "timeout": EvaluationStatus.TIMEOUT,
    "crash": EvaluationStatus.RUNTIME_ERROR,
    "oom": EvaluationStatus.RUNTIME_ERROR,
    "protocol": EvaluationStatus.RUNTIME_ERROR,
}


class WorkloadOutcome(EvaluationError):
    """Ends one workload's evaluation early with a finished trace (caught in `evaluate`, never leaves it)."""

    def __init__(self, trace: Trace):
        self.trace = trace


@dataclass
class _Build:
    session: SandboxSession | None = None
    error: Trace | None = None


def evaluate(
    problem: Problem,
    solution: Solution,
    config: EvaluationConfig | None = None,
    progress: ProgressCallback | None = None,
    *,
    cache: Path | None = None,
    refresh_cache: bool = False,
    sandboxes: SandboxPool | None = None,
    reference_timings: ReferenceTimings | None = None,
) -> list[Trace]:
    """Evaluate `solution` on every workload of `problem`; returns one trace per workload, in order.

    `config` defaults to ``EvaluationConfig()`` (device ``auto``: cuda when present). With `cache`, a
    folder, an earlier evaluation with the same key is returned instead of measuring (see
    result_cache.py); `refresh_cache` measures again and overwrites it. Every trace then records
    the cache's use in ``evaluation.solbench.cache``.

    For many candidates of one problem (an optimisation loop): `sandboxes`, a SandboxPool (pool.py),
    hands this evaluation a warm spare sandbox that no solution ran in, and `reference_timings`, a
    ReferenceTimings (reference_timing.py), reuses T_b measured by an earlier candidate for the same
    problem, workload, device and settings instead of timing the reference again.

    Raises, before starting any process, HarnessOptionError for a device this machine lacks or a
    timer that does not suit it (the config checked its other options when it was made) and
    SpecError for problems with missing data files or a solution written for another definition;
    everything the solution does becomes a status.
    """
    config = (config or EvaluationConfig()).resolved().with_threads()
    check_device_available(config.device)
    check_data_files(problem, config.data_roots)
    check_memory(problem, config)
    if solution.definition != problem.name:
        raise SpecError(
            None,
            "definition",
            f"solution {solution.name!r} is for {solution.definition!r}, not for this problem {problem.name!r}",
        )
    report = progress or (lambda *_: None)
    warm = _Warm(sandboxes, reference_timings)
    if cache is None:
        return _with_tiers(problem, _measure(problem, solution, config, report, warm))
    from solbench.evaluation.result_cache import cached_evaluation

    traces = cached_evaluation(
        cache,
        problem,
        solution,
        config,
        lambda: _measure(problem, solution, config, report, warm),
        refresh=refresh_cache,
    )
    first = traces[0].evaluation if traces else None
    if first and first.solbench and first.solbench.cache and first.solbench.cache.hit:
        report(len(traces), len(traces), "read from the result cache")
    return _with_tiers(problem, traces)


def check_memory(problem: Problem, config: EvaluationConfig) -> None:
    """Refuse, before any input is made, a workload whose tensors would exceed the memory limit: the evaluator
    builds them in this process and would take the machine down with it. The estimate: inputs and outputs twice
    (here and in the sandbox) and a float64 copy of each floating-point one (the golden result)."""
    limit = config.memory_limit_bytes
    if limit is None:
        return
    for workload in problem.workloads:
        needed = 2 * problem.tensor_bytes(dict(workload.axes)) + problem.tensor_bytes(
            dict(workload.axes), as_float64=True
        )
        if needed > limit:
            tier = problem.tier_of(workload)
            hint = (
                " (the CPU tier keeps the definition's constant axes; this problem has none small enough)"
                if tier == "gpu" and config.device.startswith("cpu")
                else ""
            )
            raise MemoryLimitError(
                f"workload {workload.uuid} ({tier} tier) needs about {needed / 1e9:.1f} GB for "
                f"its inputs, outputs and golden copies, more than the memory limit of {limit / 1e9:.1f} GB "
                f"(--memory-limit-gb){hint}"
            )


def _with_tiers(problem: Problem, traces: list[Trace]) -> list[Trace]:
    """Each trace with the workload tier (``gpu``/``cpu``) its workload came from, in ``evaluation.solbench.tier``."""
    stamped = []
    for trace in traces:
        evaluation = trace.evaluation
        details = evaluation.solbench if evaluation else None
        if evaluation is not None and details is not None:
            details = details.model_copy(
                update={
                    "tier": problem.tier_of(trace.workload),
                    "const_overrides": problem.const_overrides(trace.workload) or None,
                }
            )
            trace = trace.model_copy(update={"evaluation": evaluation.model_copy(update={"solbench": details})})
        stamped.append(trace)
    return stamped


@dataclass(frozen=True)
class _Warm:
    """What earlier evaluations left ready for this one."""

    sandboxes: SandboxPool | None = None
    reference_timings: ReferenceTimings | None = None


def _measure(
    problem: Problem, solution: Solution, config: EvaluationConfig, progress: ProgressCallback, warm: _Warm = _Warm()
) -> list[Trace]:
    run = _Run(problem, solution, config, progress, warm)
    if config.static_check:
        findings = check_solution(solution)
        run.static_checks = [
            CheckOutcome(
                rule=f"static:{f.rule}", passed=f.severity is not Severity.BLOCK, detail=f.one_line(), phase="static"
            )
            for f in findings
        ]
        blocked = blocking(findings)
        if blocked:
            failure = f"static check: {blocked[0].one_line()}" + (
                f" (+{len(blocked) - 1} more)" if len(blocked) > 1 else ""
            )
            verdict = Verdict(checks=run.static_checks, failure=next(c for c in run.static_checks if not c.passed))
            return [
                make_trace(run.context, workload, EvaluationStatus.REWARD_HACK, failure=failure, verdict=verdict)
                for workload in problem.workloads
            ]
    return run.execute()


def _refused(verdict: Verdict, rule: str, detail: str, phase: str) -> Verdict:
    """`verdict` with `rule` failed: its first failure unless one came before, so the trace's failed_rule names it."""
    verdict.record(CheckOutcome(rule=rule, passed=False, detail=detail, phase=phase), keep=True)
    return verdict


class _Run:
    def __init__(
        self,
        problem: Problem,
        solution: Solution,
        config: EvaluationConfig,
        progress: ProgressCallback,
        warm: _Warm = _Warm(),
    ):
        self.problem, self.solution, self.config, self.progress = problem, solution, config, progress
        self.warm = warm
        self.limits = SandboxLimits(
            memory_bytes=config.memory_limit_bytes, containment=config.containment, threads=config.threads
        )
        name = device_name(config.device)
        self.context = RunContext(
            definition=problem.name,
            solution=solution.name,
            environment=Environment(hardware=name, libs=library_versions()),
            device=config.device,
            device_name=name,
            clock=clock_state(config.device),
        )
        self.build = _Build()
        self.device_lock = DeviceLock(config.device)  # every workload's timing turn; `execute` closes its file
        self.static_checks: list[CheckOutcome] = []
        self._line_flush = None

    def as_sandbox(self) -> contextlib.AbstractContextManager[None]:
        """The block runs under the torch settings the sandbox runs under (torch_settings.py). Held around each
        computation whose result the candidate's is compared with (the reference's, golden and lower-precision
        runs, input making, the timed reference) and not around the evaluation: other evaluations in this process
        wait for these settings only while this one computes here, not while its sandbox works."""
        assert self.config.threads is not None, "evaluate decides the thread count"
        return running_as(sandbox_settings(self.config.threads))

    def execute(self) -> list[Trace]:
        """Every workload's trace."""
        total = len(self.problem.workloads)
        session = self._start_session()  # the child imports torch while the reference loads here
        try:
            with self.as_sandbox():  # a reference module may compute at import
                reference = ReferenceProgram(self.problem.definition, self.config.device)
        except ReferenceFailure as error:
            session.close()
            if self.warm.sandboxes is not None:
                self.warm.sandboxes.refill()
            return [
                make_trace(self.context, w, EvaluationStatus.INVALID_REFERENCE, failure=str(error))
                for w in self.problem.workloads
            ]
        traces: list[Trace] = []
        try:
            for index, workload in enumerate(self.problem.workloads):
                self.progress(index, total, f"workload {workload.uuid}")
                session = self._ensure_built(session)
                if self.build.error is not None:
                    traces.append(self._copy_build_error(workload))
                    continue
                assert session is not None, "_ensure_built starts one unless the build failed"
                traces.append(self._evaluate_workload(workload, reference, session))
                if not session.alive:
                    session.close()
                    session = None
            self.progress(total, total, "done")
        finally:
            if session is not None:
                session.close()
            reference.close()
            self.device_lock.close()
            if self.warm.sandboxes is not None:  # the next spare warms up now, not during this one's timed calls
                self.warm.sandboxes.refill()
        return traces

    @functools.cached_property
    def reference_timing_base(self) -> str:
        """The workload-independent part of the reference-timing key, hashed once per evaluation."""
        return problem_timing_key(self.problem, self.config)

    def line_flush(self):
        """The native cache-line flush helper loaded here, for timing the reference, or (None, why not)."""
        if not self.config.device.startswith("cpu"):
            return None, "not a CPU run"
        if not (self.config.flush_cache and self.config.cpu_flush == "operands"):
            return None, "the operand flush is not used"  # flusher_for streams or flushes nothing: no helper to build
        if self._line_flush is None:
            from solbench.sandbox.line_flush import HelperUnavailable, build_helper, load_helper

            try:
                self._line_flush = (load_helper(build_helper()), None)
            except HelperUnavailable as error:
                self._line_flush = (None, str(error))
        return self._line_flush

    # --- sandbox lifecycle ------------------------------------------------------------------
    def _start_session(self) -> SandboxSession:
        pool = self.warm.sandboxes
        session = (
            pool.take(self.config.device, self.limits)
            if pool is not None
            else SandboxSession(self.config.device, self.limits)
        )
        self.context = replace(self.context, confinement=session.confinement)
        return session

    def _ensure_built(self, session: SandboxSession | None) -> SandboxSession | None:
        if self.build.error is not None:
            return session
        if session is None:
            session = self._start_session()
        if self.build.session is session:
            return session
        request = BuildRequest(solution=self.solution.model_dump(mode="json"))
        try:
            reply = session.request(request, self.config.build_timeout_s)
        except SandboxFailure as failure:
            status = EvaluationStatus.TIMEOUT if failure.kind == "timeout" else EvaluationStatus.COMPILE_ERROR
            self.build.error = self._build_failure(status, f"build: {failure}", session.log.take())
            return session
        if isinstance(reply, FAILURES):
            guarded = isinstance(reply, GuardTripped)
            status = EvaluationStatus.REWARD_HACK if guarded else EvaluationStatus.COMPILE_ERROR
            message = f"{reply.rule}: {reply.error}" if guarded else reply.error
            self.build.error = self._build_failure(
                status, message, session.log.take(), rule=reply.rule if guarded else None
            )
            return session
        session.note_sandbox_state(reply.state)
        self.context = replace(self.context, confinement=dict(session.confinement))
        self.build.session = session
        return session

    def _build_failure(self, status: EvaluationStatus, message: str, log: str, rule: str | None = None) -> Trace:
        verdict = None
        if rule is not None:  # a guard tripped while the solution loaded: named in failed_rule
            verdict = _refused(Verdict(checks=list(self.static_checks)), rule, message, "build")
        return make_trace(self.context, self.problem.workloads[0], status, log, failure=message, verdict=verdict)

    def _copy_build_error(self, workload: Workload) -> Trace:
        template = self.build.error
        assert template is not None, "called only after a failed build"
        return template.model_copy(update={"workload": workload})

    # --- one workload -----------------------------------------------------------------------
    def _evaluate_workload(self, workload: Workload, reference: ReferenceProgram, session: SandboxSession) -> Trace:
        seed = self.config.input_seed if self.config.input_seed is not None else secrets.randbits(62)
        try:
            return _WorkloadEvaluation(self, workload, reference, session, seed).run()
        except WorkloadOutcome as outcome:
            return outcome.trace
        except SandboxFailure as failure:
            status = _FAILURE_STATUS[failure.kind]
            return make_trace(
                self.context, workload, status, session.log.take(), failure=str(failure), seed=seed, rule=failure.kind
            )


class _WorkloadEvaluation:
    def __init__(self, run: _Run, workload: Workload, reference: ReferenceProgram, session: SandboxSession, seed: int):
        self.run_state, self.config = run, run.config
        self.workload, self.reference, self.session, self.seed = workload, reference, session, seed
        self.tolerance = workload.effective_tolerance
        definition = run.problem.definition
        self.axes = run.problem.axes_of(workload)
        self.expected = [
            ExpectedOutput(name, definition.shape_of(t, self.axes) or (), t.dtype, self.config.device)
            for name, t in definition.outputs.items()
        ]
        self.perturbations = timing_perturbations(definition)
        self.slowest_call_s = 0.0
        self.golden_available = self.config.check_precision and self.tolerance.distribution is None
        self.precision = None

    def _stop(
        self, status: EvaluationStatus, failure: str | None = None, verdict: Verdict | None = None, **extra
    ) -> WorkloadOutcome:
        return WorkloadOutcome(
            make_trace(
                self.run_state.context,
                self.workload,
                status,
                self.session.log.take(),
                failure=failure,
                verdict=verdict,
                seed=self.seed,
                rounds=self.config.rounds,
                precision=self.precision,
                **extra,
            )
        )

    def run(self) -> Trace:
        with self.run_state.as_sandbox():
            sets, references = self._prepare_truth()
            self.precision = self._precision_record(sets[0], references[0])
        self._load(sets, self.expected)
        verdict = Verdict(checks=list(self.run_state.static_checks))
        for round_index in range(self.config.rounds):
            reply = self._call(round_index)
            with self.run_state.as_sandbox():
                check_outputs(
                    reply.outputs,
                    reply.devices,
                    references[round_index],
                    self.expected,
                    self.tolerance,
                    verdict,
                    round_index,
                    self._golden(sets[round_index], verdict, references[round_index]),
                    keep_passed=round_index == 0,
                    precision=self.precision,
                    lower_run=self._lower_runs(sets[round_index]),
                )
            if verdict.failure is not None:
                raise self._stop(verdict.status, verdict=verdict)
        if self.tolerance.distribution is not None:
            self._check_distribution(self.tolerance.distribution, sets, verdict)
        self._check_processes(verdict, "correctness")
        if not self.config.time_solution:  # correctness only
            return make_trace(
                self.run_state.context,
                self.workload,
                EvaluationStatus.PASSED,
                self.session.log.take(),
                verdict=verdict,
                rounds=self.config.rounds,
                seed=self.seed,
                correctness_only=True,
                precision=self.precision,
            )
        # The settings first, then the device: inside its turn this evaluation checks timed outputs and times the
        # reference under the settings, and waiting for them there (another thread's golden runs) would hold every
        # process's timings on this device idle. One order everywhere: no turn is ever taken inside the settings.
        with self.run_state.as_sandbox(), self.run_state.device_lock.turn() as turn:
            timing, reference_timing = self._timings(sets, verdict)
        timing = timing.model_copy(update={"device_wait_s": turn.waited_s, "load_average": turn.load_average})
        profile = self._profile() if self.config.profile else None  # untimed: outside the device's turn
        log = self.session.log.take()
        return make_trace(
            self.run_state.context,
            self.workload,
            EvaluationStatus.PASSED,
            log,
            verdict=verdict,
            rounds=self.config.rounds,
            timing=timing,
            reference_timing=reference_timing,
            seed=self.seed,
            timer=timing.backend,
            precision=self.precision,
            profile=profile,
        )

    def _timings(self, sets: list, verdict: Verdict):
        """The solution's timing and the reference's (None when not asked for): with the reference timed now, in
        both orders (orders.py); a reused one is taken as it is."""
        reference_timing = None
        known, key = self.run_state.warm.reference_timings, None
        if self.config.time_reference and known is not None:
            key = workload_timing_key(self.run_state.reference_timing_base, self.workload)
            reference_timing = known.get(key)
        both_orders = self.config.time_reference and reference_timing is None
        plan = half_plan(self._timing_plan()) if both_orders else self._timing_plan()
        timing = self._time_solution(sets, verdict, plan)
        self._check_processes(verdict, "timing")
        if self.config.time_reference:
            with self.session.paused():  # nothing the solution left behind may compete with the reference
                if reference_timing is None:
                    with self.run_state.as_sandbox():
                        reference_timing = self._time_reference(sets)
            self._check_scheduling()  # when T_b is reused too: a changed scheduling would slow later work
        if both_orders:
            timing = in_both_orders(timing, self._time_solution(sets, verdict, half_plan(self._timing_plan())))
            self._check_processes(verdict, "timing")
            # Only from a workload that passed, scheduling intact (key is set exactly when known is).
            if known is not None and key is not None and reference_timing is not None:
                known.put(key, reference_timing)
        return timing, reference_timing

    def _check_scheduling(self) -> None:
        if self.session.scheduling_changes:
            raise self._refuse(
                "scheduling",
                "the evaluator's CPU scheduling was changed while the sandbox ran "
                f"({'; '.join(self.session.scheduling_changes[:3])}); it was restored before the "
                "reference was timed",
            )

    def _check_processes(self, verdict: Verdict, phase: str) -> None:
        """A process the solution detached from the sandbox's group (setsid, setpgid) and left running past its calls
        could work while nothing is timed or answer for it; containment kills it with the sandbox, and here it is
        refused with the processes named. The sandbox ends, so the next workload starts clean."""
        detached = self.session.detached_processes()
        if not detached:
            return
        detail = (
            f"{len(detached)} process(es) left running outside the sandbox's process group after the "
            f"{phase} calls: {'; '.join(detached[:3])}; they were killed"
        )
        self.session.kill()
        raise self._refuse("processes", detail, verdict=verdict, phase=phase)

    def _refuse(
        self,
        rule: str,
        detail: str,
        status: EvaluationStatus = EvaluationStatus.REWARD_HACK,
        *,
        verdict: Verdict | None = None,
        phase: str = "runtime",
    ) -> WorkloadOutcome:
        """End the workload with `status`, naming `rule` in the trace's failed_rule as well as in its failure line."""
        verdict = _refused(verdict or Verdict(checks=list(self.run_state.static_checks)), rule, detail, phase)
        return self._stop(status, f"{rule}: {detail}", verdict=verdict)

    def _prepare_truth(self) -> tuple[list, list]:
        context = InputContext(
            self.run_state.problem, self.workload, self.axes, self.config.device, self.config.data_roots
        )
        try:
            sets = [generate_inputs(context, self.seed + r, self.reference.module) for r in range(self.config.rounds)]
            references = [self.reference.run(inputs) for inputs in sets]
        except MissingDataError:
            raise
        except (SpecError, ReferenceFailure) as error:
            raise self._stop(EvaluationStatus.INVALID_REFERENCE, str(error)) from None
        for outputs in references:
            problem = reference_problem(outputs, self.expected, self.tolerance)
            if problem:
                raise self._stop(EvaluationStatus.INVALID_REFERENCE, problem)
        return sets, references

    def _precision_record(self, inputs: list, reference_outputs: list):
        """The precision policy for this workload and, under ``tolerance``, the lowest matrix precision its
        tolerance admits (the reference rerun with emulated low-precision products; cached), which the
        downgrade rule then allows (sol/precision.py)."""
        from solbench.sol.precision import resolve_policy, strict_record, workload_record

        if resolve_policy(self.run_state.problem, self.config.precision) == "strict":
            return strict_record()
        return workload_record(
            self.run_state.problem,
            self.workload,
            self.reference.run,
            inputs,
            reference_outputs,
            origin=f"evaluation {self.config.resolved().device}",
        )

    def _golden(self, inputs: list, verdict: Verdict, reference_outputs: list) -> list | None:
        """Float64 outputs for `inputs`, or None where precision is not checked.

        Run for every round and every checked timed iteration: a solution that keeps full precision
        only on some calls must not pass. A reference with no float64 path is not tried again. Where the
        float64 run did not fit the device, the trace's ``golden`` says what was done instead (``golden_run``).
        """
        if not self.golden_available:
            return None
        golden = self.reference.run_golden(inputs, reference_outputs)
        self.golden_available = golden is not None
        if self.reference.golden_note:
            verdict.golden.setdefault("golden_run", self.reference.golden_note)
        return golden

    def _profile(self) -> ProfileSummary:
        """Where the solution's time goes, from untimed calls under the profiler after the timed loop (the sandbox's
        report: for the agent, never scored). A solution that fails in these calls fails the workload."""
        reply: Profiled = self._request(ProfileRequest(calls=PROFILE_CALLS, top=PROFILE_TOP_OPS))
        self._check_processes(Verdict(checks=list(self.run_state.static_checks)), "profile")
        return profile_summary(reply, PROFILE_CALLS)

    def _lower_runs(self, inputs: list) -> LowerRuns:
        """The reference on `inputs` rounded to a lower precision: run only when the precision rule fails and asks
        which cause it is (downgrade.py), once per precision."""
        runs: dict[str, list | None] = {}

        def run(precision: str) -> list | None:
            if precision not in runs:
                runs[precision] = self.reference.run_rounded(inputs, precision)
            return runs[precision]

        return run

    def _request(self, message, timeout_s: float | None = None):
        """The reply to `message`; a failure the sandbox reports ends the workload with its status."""
        reply = self.session.request(message, timeout_s or self.config.timeout_s)
        if not isinstance(reply, FAILURES):
            return reply
        if isinstance(reply, (OutputRejected, GuardTripped)):
            status = (
                EvaluationStatus.REWARD_HACK
                if isinstance(reply, GuardTripped) or reply.rule == "tensor_subclass"
                else EvaluationStatus.RUNTIME_ERROR
            )
            raise self._refuse(reply.rule, reply.error, status)
        if isinstance(reply, RequestRejected):  # the parent validated it: a solution wrote to the channel, or a bug
            raise self._stop(
                EvaluationStatus.RUNTIME_ERROR, f"the sandbox rejected a request: {reply.error}", rule="protocol"
            )
        raise self._stop(EvaluationStatus.RUNTIME_ERROR, reply.error, rule="exception")

    def _load(self, sets: list, expected: list[ExpectedOutput]) -> None:
        self._request(
            LoadRequest(
                sets=sets,
                perturbations=self.perturbations,
                outputs=[OutputDescription(name=e.name, shape=list(e.shape), dtype=e.dtype) for e in expected],
            )
        )

    def _check_distribution(self, check: DistributionCheck, sets: list, verdict: Verdict) -> None:
        """Outputs that are samples: N draws from each side, compared row by row (distribution_check.py). The
        sandbox holds the draw set meanwhile, each call sending only fresh random numbers, and gets the workload's
        own sets back after. The draws' random numbers come from the seed after the rounds' (seed + rounds), so the
        trace's seed reproduces them, and no round's input stream is drawn again."""
        import torch

        from solbench.evaluation.distribution_check import compare_samples
        from solbench.evaluation.draws import DrawSetError, make_draw_set

        definition = self.run_state.problem.definition
        generator = torch.Generator().manual_seed(self.seed + self.config.rounds)
        try:
            with self.run_state.as_sandbox():
                draw_set = make_draw_set(definition, self.axes, sets[0], check, generator)
        except DrawSetError as error:
            raise self._stop(EvaluationStatus.INVALID_REFERENCE, str(error)) from None
        if draw_set is None:
            return
        expected = [
            replace(e, shape=definition.shape_of(definition.outputs[e.name], draw_set.axes) or ())
            for e in self.expected
        ]
        self._load([draw_set.inputs], expected)

        def reference(inputs: list) -> list:
            try:
                with self.run_state.as_sandbox():
                    return self.reference.run(inputs)
            except ReferenceFailure as error:
                raise self._stop(EvaluationStatus.INVALID_REFERENCE, f"drawing samples: {error}") from None

        def candidate(fresh: list) -> list:
            reply = self._call(0, [FreshInput(index=i, value=v) for i, v in fresh])
            check_structure(reply.outputs, reply.devices, expected, verdict, 0, "distribution")
            if verdict.failure is not None:
                raise self._stop(verdict.status, verdict=verdict)
            return reply.outputs

        result = compare_samples(check, draw_set, reference, candidate, generator)
        worst = result.worst
        verdict.record(
            CheckOutcome(
                rule="distribution",
                passed=result.passed,
                detail=result.detail(),
                value=worst.distance,
                limit=worst.bound,
                output="+".join(e.name for e in self.expected),
                round=0,
            ),
            keep=True,
        )
        if verdict.failure is not None:
            raise self._stop(verdict.status, verdict=verdict)
        self._load(sets, self.expected)

    def _call(self, round_index: int, fresh: list[FreshInput] | None = None) -> Called:
        reply = self._request(CallRequest(input_set=round_index, fresh_inputs=fresh or []))
        if not (len(reply.outputs) == len(self.expected) and len(reply.devices) == len(reply.outputs)):
            raise self._stop(EvaluationStatus.RUNTIME_ERROR, "the sandbox returned a malformed result", rule="protocol")
        mutated = reply.mutated_inputs
        if mutated:
            names = list(self.run_state.problem.definition.inputs)
            described = ", ".join(names[i] for i in mutated if 0 <= i < len(names))
            raise self._refuse(
                "input_mutation", f"the solution modified input(s) {described or mutated}; inputs are read-only"
            )
        self.slowest_call_s = max(self.slowest_call_s, reply.seconds)
        return reply

    def _timing_plan(self) -> TimingPlan:
        """The configured plan: one timed output per input variant kept for checking, chosen in the sandbox
        after each call returns (see measure.py), and a fresh perturbation seed."""
        return replace(self.config.timing, capture=True, perturb_seed=secrets.randbits(48))

    def _time_solution(self, sets: list, verdict: Verdict, plan: TimingPlan):
        from solbench.sandbox.flush import CPU_FLUSH_MODES

        assert plan.perturb_seed is not None, "_timing_plan draws a seed"
        cpu_flush = self.config.cpu_flush
        assert cpu_flush in CPU_FLUSH_MODES, "check_harness_options refuses any other flush"
        calls = plan.min_iterations + plan.min_warmup + 2
        deadline = self.config.timeout_s + plan.budget_s + plan.warmup_s + 3 * calls * self.slowest_call_s
        reply: Timed = self._request(
            TimeRequest(plan=plan, timer=self.config.timer, flush=self.config.flush_cache, cpu_flush=cpu_flush),
            deadline,
        )
        samples = reply.samples_s
        if reply.seeds is None or len(reply.seeds) != len(samples):
            raise self._stop(
                EvaluationStatus.RUNTIME_ERROR,
                "timing returned no perturbation seed for some timed iteration",
                rule="timed_outputs",
            )
        variants = len(sets)
        seen = set()
        for entry in reply.captured:
            iteration, outputs, devices = entry.iteration, entry.outputs, entry.devices
            if not iteration < len(samples) or iteration % variants in seen:
                raise self._stop(
                    EvaluationStatus.RUNTIME_ERROR,
                    "timing returned outputs of an iteration it did not time, or two for one input variant",
                    rule="timed_outputs",
                )
            seen.add(iteration % variants)
            inputs = perturbed_inputs(sets[iteration % variants], iteration, reply.seeds[iteration], self.perturbations)
            with self.run_state.as_sandbox():
                try:
                    truth = self.reference.run(inputs)
                except ReferenceFailure as error:
                    raise self._stop(
                        EvaluationStatus.INVALID_REFERENCE, f"on perturbed timing inputs: {error}"
                    ) from None
                check_outputs(
                    outputs,
                    devices,
                    truth,
                    self.expected,
                    self.tolerance,
                    verdict,
                    iteration,
                    self._golden(inputs, verdict, truth),
                    phase="timing",
                    precision=self.precision,
                    lower_run=self._lower_runs(inputs),
                )
            if verdict.failure is not None:
                raise self._stop(verdict.status, verdict=verdict)
        if seen != set(range(min(variants, len(samples)))):
            raise self._stop(
                EvaluationStatus.RUNTIME_ERROR, "timing kept no output for some input variant", rule="timed_outputs"
            )
        resolution = reply.resolution_s
        return timing_summary(
            reply.backend,
            list(samples),
            reply.warmup,
            reply.flush_bytes,
            self.config.rounds,
            list(reply.warnings[:10]),
            resolution if resolution else None,
            reply.flush_mode,
            reply.flush_note,
        )

    def _time_reference(self, sets: list):
        from solbench.sandbox.flush import flusher_for
        from solbench.sandbox.measure import measure
        from solbench.sandbox.rotation import InputRotation
        from solbench.sandbox.timers import select_timer

        rotation = InputRotation(sets, self.perturbations, perturb_seed=secrets.randbits(48))
        rotation.reserve(self.config.timing.max_iterations)
        timer = select_timer(self.config.timer, self.config.device)
        last_outputs: list = []

        def run_reference() -> list:
            last_outputs[:] = self.reference.run(rotation.live)
            return last_outputs

        helper, missing = self.run_state.line_flush()
        flusher = flusher_for(
            self.config.device,
            self.config.flush_cache,
            self.config.cpu_flush,
            lambda: [*rotation.live, *last_outputs],
            helper,
            missing,
        )
        measurement = measure(
            run_reference, rotation.prepare, len(rotation), timer, flusher, replace(self.config.timing, capture=False)
        )
        return timing_summary(
            measurement.backend,
            measurement.samples_s,
            measurement.warmup,
            measurement.flush_bytes,
            len(rotation),
            measurement.warnings,
            measurement.resolution_s,
            measurement.flush_mode,
            measurement.flush_note,
        )
