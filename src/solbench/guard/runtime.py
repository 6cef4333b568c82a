"""Runtime integrity checks that run inside the sandbox, around the solution's code.

The harness inside the sandbox shares an interpreter with the solution, so the solution could
replace the timer, the functions that copy outputs, or the channel's encoder. Identities (and
code objects) of those functions are recorded before the solution is imported and compared after
the import, after every call and after the timed loop, together with the other ways code can run
inside the harness's own work: signal handlers and POSIX timers (Python's and native ones), torch
modes, torch.Tensor's methods, kernels registered over the operators the harness uses (in the
dispatcher's tables or on the Python dispatcher), profile/trace/monitoring hooks and audit hooks
(refused as they are added). Threads left running after a call are accounted for by
`threads.py`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

# Dotted paths of everything the measurement relies on; missing ones (no CUDA build) are skipped.
CRITICAL = (
    "time.perf_counter", "time.perf_counter_ns", "time.monotonic", "time.monotonic_ns",
    "builtins.isinstance", "builtins.type", "builtins.len", "builtins.getattr", "builtins.id",
    "torch.Tensor.clone", "torch.Tensor.copy_", "torch.Tensor.cpu", "torch.Tensor.contiguous", "torch.Tensor.view",
    "torch.Tensor.numel", "torch.Tensor.detach", "torch.equal", "torch.full", "torch.cuda.synchronize",
    "torch.rand", "torch.randint", "torch.zeros_like", "torch.empty", "torch.ones", "torch.where", "torch.Generator",
    "torch.add", "torch.set_num_threads", "torch.get_num_threads",
    "torch.cuda.Event.record", "torch.cuda.Event.elapsed_time", "torch.cuda.Event.synchronize",
    "socket.socket.sendall", "socket.socket.recv_into",
    "solbench.sandbox.measure.measure", "solbench.sandbox.measure._should_stop",
    "solbench.sandbox.calling.call_with_convention", "solbench.sandbox.calling.normalize_outputs",
    "solbench.sandbox.calling.sentinel_outputs", "solbench.sandbox.calling.materialized",
    "solbench.sandbox.wire.send_message",
    "solbench.sandbox.wire._encode_value", "solbench.sandbox.rotation.InputRotation.prepare",
    "solbench.sandbox.rotation.InputRotation.mutated", "solbench.sandbox.rotation._perturb",
    "solbench.sandbox.rotation._flip_signs", "solbench.sandbox.rotation._negate_codes",
    "solbench.sandbox.rotation._complement_nibbles", "solbench.sandbox.timers.cpu.CpuTimer.time_call",
    "solbench.sandbox.timers.cuda_events.CudaEventTimer.time_call",
    "solbench.sandbox.timers.cuda_profiler.CudaProfilerTimer.time_call",
    "solbench.sandbox.flush.CpuCacheFlusher.flush", "solbench.sandbox.flush.CudaCacheFlusher.flush",
    "solbench.sandbox.child.SandboxServer.call", "solbench.sandbox.child.SandboxServer.time",
    "solbench.sandbox.child.SandboxServer._invoke", "solbench.sandbox.child.SandboxServer._prepare",
    "solbench.guard.runtime.IntegrityGuard.verify", "solbench.guard.threads.ThreadGuard.settle",
    "solbench.guard.threads.ThreadGuard.begin_gap", "solbench.guard.threads.ThreadGuard.check_gap",
    "solbench.guard.threads.ThreadGuard._solution_cpu_s", "time.clock_gettime", "solbench.guard.threads.ThreadGuard._busy",
    "solbench.guard.threads.ThreadGuard._probe", "solbench.guard.threads.ThreadGuard._find_native_threads",
    "solbench.guard.threads.ThreadGuard._thread_count_unchanged",
    "solbench.guard.threads.ThreadGuard._natives_still", "solbench.guard.threads._task_ids",
    "solbench.guard.threads._cpu_time_s", "solbench.guard.threads.harness_thread_count",
    "solbench.sandbox.child.SandboxServer._between_calls",
    "solbench.sandbox.child.SandboxServer._check_tensors_untouched", "solbench.sandbox.measure.measure",
    "os.listdir", "os.fstat", "torch.get_num_threads", "torch.set_num_threads",
    "sys._current_frames", "time.clock_gettime_ns", "time.sleep", "secrets.randbelow", "os.urandom",
    "_thread.start_new_thread", "_thread.start_joinable_thread", "threading._start_new_thread",
    "threading._start_joinable_thread",
)


class GuardViolation(Exception):
    """A runtime check failed; `rule` is ``integrity`` or ``threads``."""

    def __init__(self, rule: str, message: str):
        self.rule = rule
        super().__init__(message)


def _resolve(path: str):
    parts = path.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            value = getattr(value, attribute)  # AttributeError: not available here
        return value
    raise ImportError(path)


def _fingerprint(value) -> tuple:
    code = getattr(value, "__code__", None)
    return id(value), id(code) if code is not None else None


HARNESS_OPS = (
    "aten::_to_copy", "aten::add_.Tensor", "aten::bitwise_and.Scalar", "aten::bitwise_and.Tensor",
    "aten::bitwise_and_.Tensor", "aten::bitwise_or_.Tensor", "aten::bitwise_xor.Tensor", "aten::bitwise_xor_.Tensor",
    "aten::clone", "aten::copy_", "aten::detach", "aten::empty.memory_format", "aten::empty_strided", "aten::equal",
    "aten::fill_.Scalar", "aten::full", "aten::mul.Tensor", "aten::mul_.Tensor", "aten::ne.Scalar", "aten::neg",
    "aten::ones", "aten::rand.generator", "aten::randint.low_generator", "aten::t", "aten::view", "aten::view.dtype",
    "aten::where.self", "aten::zero_", "aten::zeros_like",
)
"""The operators the harness's own tensor work in the sandbox dispatches (input rotation, the flush, sentinels,
copies of outputs, the channel's encoder); tests/guard/test_runtime.py records them to keep the list whole."""

HARNESS_MODULES = ("solbench.sandbox", "solbench.guard")
"""Packages whose module globals the harness inside the sandbox reads its functions and modules through."""


def _tensor_methods() -> dict[str, int]:
    """Identity of every attribute of torch.Tensor and its C base: the harness's tensor work calls them
    (`buffer.add_(1)` in the flush), and one replaced runs the solution's code there."""
    import torch

    return {f"{cls.__name__}.{name}": id(value) for cls in (torch.Tensor, torch._C.TensorBase)
            for name, value in list(vars(cls).items())}


def _dispatcher_state() -> tuple:
    """What decides which kernel a call reaches besides the registered tables: the Python dispatcher, the kernels
    registered on it (`py_impl`) for the harness's operators, and this thread's included and excluded keys."""
    import torch

    py_kernels = []
    for op in HARNESS_OPS:
        name, _, overload = op.removeprefix("aten::").partition(".")
        packet = getattr(torch.ops.aten, name, None)
        operator = getattr(packet, overload or "default", None) if packet is not None else None
        kernels = getattr(operator, "py_kernels", None) or {}
        py_kernels.append((op, tuple(sorted((str(key), id(kernel)) for key, kernel in kernels.items()))))
    # The Python dispatcher, when on, is the PythonDispatcher key in the included set.
    return (tuple(py_kernels), repr(torch._C._dispatch_tls_local_include_set()),
            repr(torch._C._dispatch_tls_local_exclude_set()))


def status_field(name: str) -> str | None:
    """A field of /proc/self/status (SigCgt, CapEff: hex masks); None where it cannot be read."""
    try:
        with open("/proc/self/status") as status:
            return next((line.split()[1] for line in status if line.startswith(f"{name}:")), None)
    except OSError:
        return None


def _native_signal_state() -> tuple:
    """Signals caught at the C level and POSIX timers: an extension's sigaction and timer_create run its code
    wherever the process is, between calls too, and Python's signal module does not see them."""
    caught = status_field("SigCgt")
    try:
        with open("/proc/self/timers") as timers:
            posix_timers = sum(line.startswith("ID:") for line in timers)
    except OSError:
        posix_timers = None
    return caught, posix_timers


def _harness_globals() -> dict[tuple[str, str], object]:
    """Identity of every function, class and module a harness module holds as a global, and the value of every
    plain constant (a flush size, a budget).

    The harness calls through its modules' globals (``time.perf_counter_ns`` through the ``time``
    global of ``timers/cpu.py``), so rebinding a global is as good as replacing the function.
    """
    import sys
    import types

    kept = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)
    constants = (int, float, str, bytes, tuple, frozenset, type(None))
    return {(name, attribute): id(value) if isinstance(value, kept) else (type(value).__name__, repr(value))
            for name, module in list(sys.modules.items()) if module is not None and name.startswith(HARNESS_MODULES)
            for attribute, value in list(vars(module).items())
            if isinstance(value, kept) or (isinstance(value, constants) and not attribute.startswith("__"))}


def _signal_state() -> tuple:
    """Python-level signal handlers and interval timers: a handler runs wherever the main thread is, timer
    stopped or not (after the cache flush, say), so a solution may not install one."""
    import signal

    handlers = []
    for number in sorted(signal.valid_signals()):
        try:
            handlers.append((number, id(signal.getsignal(number))))
        except (OSError, ValueError):
            continue
    timers = tuple(signal.getitimer(which) for which in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF))
    return tuple(handlers), timers


def _dispatch_tables() -> dict[str, str]:
    """The kernels registered for each harness operator, on every dispatch key. A kernel registered over one of
    them (torch.library on aten::add_ for the CPU) runs the solution's code inside the harness's flush."""
    import torch

    tables = {}
    for op in HARNESS_OPS:
        try:
            tables[op] = torch._C._dispatch_dump(op)
        except RuntimeError:  # not in this torch
            continue
    return tables


def _active_modes() -> str | None:
    """A TorchFunctionMode or TorchDispatchMode left active intercepts the harness's own tensor calls (its
    clone of the outputs, after the timer stopped), where lazy work could hide."""
    import torch

    if torch._C._len_torch_function_stack():
        return "a torch function mode (TorchFunctionMode) is active"
    if torch._C._len_torch_dispatch_stack():
        return "a torch dispatch mode (TorchDispatchMode) is active"
    return None


def _active_hooks() -> str | None:
    """A profile, trace or monitoring hook runs the solution's code at every call the harness makes, between timed
    calls included, where it could compute untimed."""
    import sys

    if sys.getprofile() is not None or sys.gettrace() is not None:
        return "a profile or trace function (sys.setprofile/settrace) is installed"
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+
    if monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6)):
        return "a sys.monitoring tool is registered"
    return None


def _refuse_audit_hooks(attempts: list[str]) -> None:
    """Audit hooks cannot be removed once added, and run at every audited event, the harness's included (opening
    files, listing /proc). Installed first, this hook refuses every later one (a RuntimeError from a hook
    stops sys.addaudithook silently) and notes the attempt for the trace."""
    import sys

    def refuse(event: str, args) -> None:
        if event == "sys.addaudithook":
            attempts.append(event)
            raise RuntimeError("audit hooks are not allowed in the solbench sandbox")

    sys.addaudithook(refuse)


@dataclass
class IntegrityGuard:
    """Fingerprints of the critical functions, the harness's globals and the signal state, taken before any
    solution code runs."""

    fingerprints: dict[str, tuple]
    harness_globals: dict[tuple[str, str], int]
    signals: tuple
    audit_hook_attempts: list[str]
    dispatch_tables: dict[str, str]
    tensor_methods: dict[str, int]
    dispatcher: tuple
    native_signals: tuple

    @classmethod
    def snapshot(cls) -> "IntegrityGuard":
        fingerprints = {}
        for path in CRITICAL:
            try:
                fingerprints[path] = _fingerprint(_resolve(path))
            except (ImportError, AttributeError):
                continue
        attempts: list[str] = []
        _refuse_audit_hooks(attempts)
        return cls(fingerprints, _harness_globals(), _signal_state(), attempts, _dispatch_tables(), _tensor_methods(),
                   _dispatcher_state(), _native_signal_state())

    def verify(self, when: str) -> None:
        for path, expected in self.fingerprints.items():
            try:
                current = _fingerprint(_resolve(path))
            except (ImportError, AttributeError):
                current = None
            if current != expected:
                raise GuardViolation("integrity", f"{path} was replaced or modified ({when})")
        now = _harness_globals()
        for (module, attribute), identity in self.harness_globals.items():
            if now.get((module, attribute)) != identity:
                raise GuardViolation("integrity", f"{module}.{attribute} was rebound or removed ({when})")
        methods = _tensor_methods()
        changed = sorted(name for name in methods.keys() | self.tensor_methods.keys()
                         if methods.get(name) != self.tensor_methods.get(name))
        if changed:
            raise GuardViolation("integrity", f"torch.{changed[0]} was replaced, added or removed ({when})")
        if _dispatcher_state() != self.dispatcher:
            raise GuardViolation("integrity", "the dispatcher was changed: the Python dispatcher turned on, a Python "
                                              "kernel (py_impl) on an operator the harness uses, or this thread's "
                                              f"dispatch keys ({when})")
        if _native_signal_state() != self.native_signals:
            raise GuardViolation("integrity", "a signal handler or POSIX timer was installed from native code "
                                              f"(sigaction, timer_create) ({when})")
        tables = _dispatch_tables()
        changed = [op for op, table in self.dispatch_tables.items() if tables.get(op) != table]
        if changed:
            raise GuardViolation("integrity", f"a kernel was registered over {changed[0]}, which the harness uses "
                                              f"(torch.library on an aten operator) ({when})")
        if _signal_state() != self.signals:
            raise GuardViolation("integrity", f"a signal handler or interval timer was installed ({when})")
        mode = _active_modes() or _active_hooks()
        if mode:
            raise GuardViolation("integrity", f"{mode} ({when})")
        if self.audit_hook_attempts:
            raise GuardViolation("integrity", f"the solution tried to add an audit hook (sys.addaudithook), which "
                                              f"would run its code inside the harness's own work ({when})")
