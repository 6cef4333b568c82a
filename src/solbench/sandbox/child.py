"""Entry point of the sandbox process: builds the solution, then serves requests from the parent.

It runs untrusted code, so it is given only what a solution may see: inputs, output shapes and
the timing plan. Replies go over the private socket named by --fd; the solution's own prints go
to stdout/stderr, which the parent only captures as log text.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import socket
import sys
import time
import traceback
from pathlib import Path

from solbench.guard.runtime import GuardViolation, IntegrityGuard, status_field
from solbench.guard.threads import (
    ThreadGuard,
    harness_thread_count,
    quiet_later_openmp_runtimes,
    quiet_library_monitors,
    start_runtime_threads,
)
from solbench.sandbox import protocol
from solbench.sandbox.addresses import ReturnedStorages, ShiftingSlab
from solbench.sandbox.calling import OutputError, OutputSpec, call_with_convention, materialized, sentinel_outputs
from solbench.sandbox.channel_guard import ChannelGuard
from solbench.sandbox.protected import integrity_list
from solbench.sandbox.protocol import (
    BuildRequest,
    Built,
    Called,
    CallRequest,
    CapturedOutputs,
    CompileFailed,
    ExitRequest,
    GuardTripped,
    Loaded,
    LoadRequest,
    OutputRejected,
    Profiled,
    ProfileRequest,
    ProtocolError,
    RequestRejected,
    SandboxState,
    SolutionFailed,
    Timed,
    TimeRequest,
)
from solbench.sandbox.rotation import InputRotation
from solbench.sandbox.sample_stream import no_hooks as _no_hooks
from solbench.sandbox.sample_stream import send_sample, send_seed
from solbench.sandbox.wire import WireError, receive_message, send_message
from solbench.spec.dtypes import same_bits


class SandboxServer:
    def __init__(
        self,
        device: str,
        workdir: Path,
        line_flush=None,
        line_flush_missing: str | None = None,
        channel_guard: ChannelGuard | None = None,
    ):
        self.device = device
        self.channel_guard = channel_guard
        """The private channel's guard (channel_guard.py), made before any solution code, as this server is."""
        self.workdir = workdir
        self.line_flush = line_flush
        """The native cache-line flush helper (line_flush.LineFlushHelper), loaded before any solution code; None
        where it is missing, and then `line_flush_missing` says why (the streaming flush runs instead)."""
        self.line_flush_missing = line_flush_missing
        self.function = None
        self.dps = True
        self.output_specs: list[OutputSpec] = []
        self.inputs: InputRotation  # set by load(), the request that comes before any call or timing
        self.outputs: list | None = None
        """The DPS output buffers the next call gets, at new addresses each call (None: value-returning)."""
        self._output_slab: ShiftingSlab | None = None
        self._sentinels: list = []
        self._returned = ReturnedStorages()
        self._unchecked_outputs: list | None = None
        """What the last value-returning call returned, until the harness has checked it against earlier calls'."""
        import torch

        self.thread_count = torch.get_num_threads()
        """torch's pool size the harness's own work runs at (see harness_thread_count)."""
        self.threads = ThreadGuard()  # wraps the thread starters, so it comes before the integrity snapshot
        self.integrity = IntegrityGuard.snapshot(integrity_list(type(self), self))
        self._last_outputs: list = []
        """What the last call returned, checked with the inputs before the harness's next work."""

    # --- requests -----------------------------------------------------------------------------
    def build(self, request: BuildRequest) -> Built | CompileFailed:
        from solbench.sandbox.builders import BuildError, builder_for
        from solbench.spec.solution import Solution

        solution = Solution.model_validate(request.solution)
        started = time.monotonic()
        self.threads.solution_folder(str(self.workdir / "solution"))  # the solution's threads, not its libraries'
        try:
            self.function = builder_for(solution.spec).build(solution, self.workdir / "solution", self.device)
        except BuildError as error:
            return CompileFailed(error=str(error))
        IntegrityGuard.verify(self.integrity, "by importing the solution")
        self.dps = solution.spec.destination_passing_style
        return Built(seconds=time.monotonic() - started, state=_confinement_state())

    def load(self, request: LoadRequest) -> Loaded:
        self.output_specs = [
            OutputSpec(o.name, tuple(o.shape) if o.shape is not None else None, o.dtype) for o in request.outputs
        ]
        self.inputs = InputRotation(
            [[_to_device(v, self.device) for v in inputs] for inputs in request.sets], list(request.perturbations)
        )
        self._sentinels = sentinel_outputs(self.output_specs, self.device) if self.dps else []
        self._output_slab = ShiftingSlab(self._sentinels) if self.dps else None
        self.outputs = self._output_slab.warmup() if self._output_slab is not None else None
        self._returned, self._unchecked_outputs = ReturnedStorages(), None
        return Loaded()

    def call(self, request: CallRequest) -> Called:
        index = request.input_set
        self._prepare(index)
        fresh = self._place_fresh_inputs(request)
        started = time.monotonic()
        outputs = self._invoke()
        seconds = time.monotonic() - started
        self._check_tensors_untouched(outputs)
        self._check_returned()
        IntegrityGuard.verify(self.integrity, "during a call")
        mutated = [i for i in self.inputs.mutated(index) if i not in fresh]
        mutated += [i for i, value in fresh.items() if not same_bits(self.inputs.live[i], value)]
        return Called(
            outputs=outputs, devices=[str(o.device) for o in outputs], mutated_inputs=sorted(mutated), seconds=seconds
        )

    def _place_fresh_inputs(self, request: CallRequest) -> dict:
        """Copy a call's fresh inputs into the live buffers; {position: value} for the mutation check. A value that
        does not fit its buffer is a harness bug: ProtocolError, which the parent reads as a rejected request."""
        fresh = {}
        for item in request.fresh_inputs:
            live = self.inputs.live[item.index] if item.index < len(self.inputs.live) else None
            value = _to_device(item.value, self.device)
            if live is None or live.shape != value.shape or live.dtype != value.dtype:
                raise ProtocolError(f"fresh input {item.index} does not fit the loaded set")
            live.copy_(value)
            fresh[item.index] = value
        return fresh

    def time(self, request: TimeRequest, on_sample=None, on_seed=None) -> Timed:
        """The timed loop; `on_sample(i, seconds)` and `on_seed(i, seed)` (sample_stream, bound by `serve`) hand each
        sample and each perturbation seed to the parent as it is taken or drawn."""
        import torch

        from solbench.sandbox.flush import flusher_for
        from solbench.sandbox.measure import measure
        from solbench.sandbox.timers import select_timer

        plan = request.plan
        timer = select_timer(request.timer, self.device)
        flusher = flusher_for(
            self.device, request.flush, request.cpu_flush, self._operands, self.line_flush, self.line_flush_missing
        )
        self.inputs.reserve(plan.max_iterations)
        if self._output_slab is not None:
            self._output_slab.reserve(plan.max_iterations)
        self.threads.settle("before the timed loop")
        if self.device.startswith("cuda"):
            self.threads.adopt_threads_started_by(lambda: timer.time_call(_device_work(self.device)))
        with _no_cyclic_collection():
            measurement = measure(
                self._invoke,
                self._prepare,
                len(self.inputs),
                timer,
                flusher,
                plan,
                snapshot=lambda outputs: [torch.Tensor.clone(t) for t in outputs],
                between_calls=self._between_calls,
                on_sample=on_sample,
                on_seed=on_seed,
                no_hooks=_no_hooks,
            )
        self._check_returned()
        IntegrityGuard.verify(self.integrity, "during the timed loop")
        return Timed(
            backend=measurement.backend,
            samples_s=measurement.samples_s,
            warmup=measurement.warmup,
            flush_bytes=measurement.flush_bytes,
            flush_mode=measurement.flush_mode,
            flush_note=measurement.flush_note,
            resolution_s=measurement.resolution_s,
            captured=[
                CapturedOutputs(iteration=i, outputs=outs, devices=[str(o.device) for o in outs])
                for i, outs in sorted(measurement.captured.items())
            ],
            warnings=measurement.warnings,
            seeds=measurement.seeds,
        )

    def profile(self, request: ProfileRequest) -> Profiled:
        """Untimed calls under torch.profiler, after the timed loop (profiling.py)."""
        from solbench.sandbox.profiling import profile_calls

        profiled = profile_calls(
            request, self._invoke, self._prepare, self.device, self.threads.adopt_threads_started_by
        )
        IntegrityGuard.verify(self.integrity, "while profiled")
        return profiled

    # --- helpers ------------------------------------------------------------------------------
    def _prepare(self, index: int, seed: int | None = None) -> None:
        """Load input variant `index` (perturbed with `seed` where given) into the live buffers and arm the output
        sentinels, both at new addresses."""
        self.inputs.prepare(index, seed)
        if self._output_slab is not None:
            self.outputs = self._output_slab.warmup() if index < 0 else self._output_slab.fresh()
            for buffer, sentinel in zip(self.outputs, self._sentinels):
                buffer.copy_(sentinel)

    def _check_returned(self) -> None:
        """The last call's outputs, checked once against what earlier calls returned (outside any timed region)."""
        if self._unchecked_outputs is not None:
            outputs, self._unchecked_outputs = self._unchecked_outputs, None
            self._returned.check(outputs)

    def _operands(self) -> list:
        """What the timed call reads and writes and exists before it runs: the live inputs and the DPS output buffers,
        or, for a value-returning call, the previous call's outputs (the allocator tends to hand their memory to the
        next call's)."""
        return [*self.inputs.live, *(self._last_outputs if self.outputs is None else self.outputs)]

    @contextlib.contextmanager
    def _between_calls(self):
        """The harness's work between timed calls: on the runtime's threads only, and no solution thread may work
        meanwhile (checked last, just before the timer starts). Profile and trace functions are cleared first:
        one set from native code (PyEval_SetProfile) is invisible to sys.getprofile, and would run in this work."""
        sys.setprofile(None)
        sys.settrace(None)
        self._check_tensors_untouched(self._last_outputs)
        self._check_returned()
        with self.threads.between_calls("between timed calls"), harness_thread_count(self.thread_count):
            yield
        if gc.isenabled():
            raise GuardViolation(
                "integrity",
                "the solution turned cyclic garbage collection back on during the timed "
                "loop, where finalizers would run between calls, untimed",
            )

    def _check_tensors_untouched(self, outputs) -> None:
        """The tensors the harness works on next must behave as plain tensors: a method set on one (`z.copy_ = f`
        shadows torch.Tensor.copy_ for that tensor) or a changed class would run the solution's code in the
        harness's own work, between timed calls. Other attributes are fine (torch.compile tags its outputs)."""
        import torch

        for role, tensors in (
            ("input", self.inputs.live),
            ("output buffer", self.outputs or ()),
            ("output", outputs or ()),
        ):
            for index, value in enumerate(tensors):
                if not isinstance(value, torch.Tensor):
                    continue
                shadowed = [name for name in value.__dict__ if hasattr(torch.Tensor, name)]
                if type(value) is not torch.Tensor or shadowed:
                    what = f"set {shadowed[0]!r} on" if shadowed else "changed the class of"
                    raise GuardViolation(
                        "integrity",
                        f"the solution {what} {role} {index}, shadowing torch.Tensor's "
                        "own, which the harness uses next",
                    )

    def _invoke(self) -> list:
        """One call, as timed: it ends when the device is done and the solution's threads are idle; a thread it started
        and did not join is refused."""
        self.threads.call_starts()
        try:
            outputs = call_with_convention(
                self.function, self.inputs.live, self.outputs, [o.name for o in self.output_specs]
            )
        except BaseException:
            self.threads.call_raised()  # the solution's failure is the result; its threads die with the sandbox
            raise
        self.threads.call_returned()
        if self.outputs is None:
            outputs = materialized(outputs, self.inputs.storages)
            self._unchecked_outputs = outputs
        self._last_outputs = outputs
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()
        self.threads.settle("after the call returned")
        if _no_hooks():  # before the timer stops: the rest of the harness's frames run without the solution's hooks
            raise GuardViolation(
                "integrity",
                "the solution left a trace or profile function set after its call: it would run in the harness's "
                "own frames once the timer stops (untimed work, or the timing records rewritten before they are sent)",
            )
        self.threads.check_kept_pools()
        return outputs


@contextlib.contextmanager
def _no_cyclic_collection():
    """No cyclic garbage collection in the timed loop: it starts when allocations pass a threshold, often in the
    harness's work between calls, and the finalizers (`__del__`) of a solution's reference cycles would run then,
    untimed, on the main thread. Cycles are collected before the loop instead, and after it."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _device_work(device: str):
    import torch

    return lambda: torch.ones(1, device=device).add_(1)


def _to_device(value, device: str):
    import torch

    return value.to(device) if isinstance(value, torch.Tensor) else value


def _confinement_state() -> SandboxState:
    import os

    try:
        namespace = os.readlink("/proc/self/ns/net")
    except OSError:
        namespace = None
    try:
        os.listdir("/")  # outside every folder a confined sandbox may read
        filesystem_confined = False
    except PermissionError:
        filesystem_confined = True
    return SandboxState(
        network_namespace=namespace,
        uid=os.getuid(),
        filesystem_confined=filesystem_confined,
        capabilities=status_field("CapEff"),
    )


def _failure(error: BaseException) -> GuardTripped | OutputRejected | RequestRejected | SolutionFailed:
    if isinstance(error, ProtocolError):  # a request that validated but does not fit the sandbox's state
        return RequestRejected(error=str(error))
    if isinstance(error, GuardViolation):
        return GuardTripped(rule=error.rule, error=str(error))
    if isinstance(error, OutputError):
        return OutputRejected(rule=error.rule, error=str(error))
    if isinstance(error, SystemExit):
        return SolutionFailed(error=f"the solution called sys.exit({error.code})")
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__, limit=12))
    return SolutionFailed(error=text[-8000:])


def serve(channel: socket.socket, server: SandboxServer) -> None:
    guard = getattr(server, "channel_guard", None)
    if guard is None:  # a server made without one (tests): guarded from here, before any solution code
        with ChannelGuard(channel) as guard:
            _serve(channel, server, guard)
    else:
        _serve(channel, server, guard)


def _serve(channel: socket.socket, server: SandboxServer, guard: ChannelGuard) -> None:
    refusal = GuardTripped(
        rule="channel",
        error="the solution replaced the sandbox's private channel to the evaluator (a proxy can rewrite what the "
        "harness reports)",
    )
    encoded_refusal = functools.partial(protocol.encode, refusal)  # bound now: module globals are the solution's
    on_sample = functools.partial(send_sample, channel, guard, encoded_refusal)
    on_seed = functools.partial(send_seed, channel, guard, encoded_refusal)
    handlers = {
        BuildRequest: server.build,
        LoadRequest: server.load,
        CallRequest: server.call,
        TimeRequest: functools.partial(server.time, on_sample=on_sample, on_seed=on_seed),
        ProfileRequest: server.profile,
    }
    while True:
        try:
            request = protocol.parse_request(receive_message(channel))
        except ProtocolError as error:  # the parent built it from the same models: a bug in the harness
            send_message(channel, protocol.encode(RequestRejected(error=str(error))))
            continue
        except WireError:
            return  # the parent went away
        if isinstance(request, ExitRequest):
            return
        try:
            reply = handlers[type(request)](request)
        except BaseException as error:  # anything the solution raises, SystemExit included, is a result
            reply = _failure(error)
        sys.stdout.flush()
        sys.stderr.flush()
        guard.check(encoded_refusal)
        try:
            send_message(channel, protocol.encode(reply))
        except TypeError as error:
            send_message(channel, protocol.encode(SolutionFailed(error=f"unsendable result: {error}")))
        guard.check(encoded_refusal)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="solbench sandbox (started by the evaluator)")
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--line-flush", type=Path, default=None, help="the native cache-line flush helper to load")
    parser.add_argument("--line-flush-missing", default=None, help="why no helper was given")
    args = parser.parse_args(argv)
    channel = socket.socket(fileno=args.fd)
    import torch  # noqa: F401  imported before the snapshot so the guard fingerprints torch's functions too

    start_runtime_threads(args.device)  # before the thread guard, which takes these threads for the runtime's
    quiet_later_openmp_runtimes()
    quiet_library_monitors()
    helper, missing = _load_line_flush(args.line_flush, args.line_flush_missing)
    serve(channel, SandboxServer(args.device, args.workdir, helper, missing, ChannelGuard(channel)))


def _load_line_flush(path: Path | None, missing: str | None):
    """The helper the parent copied into the working directory, loaded, and the copy removed: the mapping stays,
    and no file is left for a solution to rewrite under it. (None, why) where there is none."""
    from solbench.sandbox.line_flush import HelperUnavailable, load_helper

    if path is None:
        return None, missing or "no native helper was given to the sandbox"
    try:
        return load_helper(path), None
    except HelperUnavailable as error:
        return None, str(error)
    finally:
        try:
            path.unlink(missing_ok=True)
        except OSError:  # the mapping is what runs; a copy left behind is only a file in the working directory
            pass


if __name__ == "__main__":
    # One module, the one running: an import of solbench.sandbox.child would otherwise load a second copy, whose
    # functions are not the ones serving requests (and whose globals the integrity guard would watch instead).
    sys.modules["solbench.sandbox.child"] = sys.modules[__name__]
    main()
