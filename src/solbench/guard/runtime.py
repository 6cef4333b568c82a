"""Runtime integrity checks that run inside the sandbox, around the solution's code.

The harness inside the sandbox shares an interpreter with the solution, so the solution could
replace the timer, the functions that copy outputs, or the channel's encoder. The sandbox hands
the guard the list of what it protects (sandbox/protected.py: objects, not names, and a missing
one is an error, never skipped); their identities (and code objects) are recorded before the
solution is imported and compared after the import, after every call and after the timed loop,
together with the other ways code can run inside the harness's own work: signal handlers and
POSIX timers (Python's and native ones), torch modes, torch.Tensor's methods, kernels registered
over the operators the harness uses (in the dispatcher's tables or on the Python dispatcher),
profile/trace/monitoring hooks and audit hooks (refused as they are added). Threads left running
after a call are accounted for by `threads.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class GuardViolation(Exception):
    """A runtime check failed; `rule` is ``integrity`` or ``threads``.

    Not a SolbenchError: it is what the solution did, which the sandbox reports as a REWARD_HACK status.
    """

    def __init__(self, rule: str, message: str):
        self.rule = rule
        super().__init__(message)


class IntegritySetupError(Exception):
    """A protected entry does not exist: the harness changed (a function renamed or moved) and its integrity list
    was not updated. A bug in solbench, never a solution's doing: the guard refuses to start without the check."""


def _name_of(owner: object) -> str:
    if isinstance(owner, type):
        return f"{owner.__module__}.{owner.__qualname__}"
    return getattr(owner, "__name__", type(owner).__name__)


@dataclass(frozen=True)
class Protected:
    """`owner.name`, an attribute the measurement relies on: a function of a module, a method of a class.

    Checked by identity (and the identity of its code object), read through `owner` each time, so
    rebinding the attribute, replacing the function's code or deleting it is seen.
    """

    owner: object
    name: str

    @property
    def label(self) -> str:
        return f"{_name_of(self.owner)}.{self.name}"


@dataclass(frozen=True)
class OptionalProtected(Protected):
    """A protected entry that exists only in some environments: absent is accepted only where `expected` is False,
    for the stated `reason` (a Python version, a CUDA build)."""

    reason: str = ""
    expected: bool = True
    """Whether this environment must have it."""


@dataclass(frozen=True)
class IntegrityList:
    """What the sandbox hands the guard to protect; built by the sandbox from the objects themselves."""

    required: tuple[Protected, ...]
    optional: tuple[OptionalProtected, ...] = ()
    classes: tuple[type, ...] = ()
    """Classes all of whose own attributes are protected (added, replaced or removed ones are refused)."""
    instances: tuple[object, ...] = ()
    """Harness objects (the running request server) none of whose instance attributes may shadow a method of its
    class, nor those of the harness objects they hold (see `_shadowed`)."""

    def resolved(self) -> tuple[Protected, ...]:
        """The entries to check here; raises IntegritySetupError for a required (or expected optional) entry that
        does not exist."""
        present = []
        for entry in (*self.required, *self.optional):
            if hasattr(entry.owner, entry.name):
                present.append(entry)
            elif not isinstance(entry, OptionalProtected) or entry.expected:
                raise IntegritySetupError(
                    f"protected entry {entry.label} does not exist: update the sandbox's "
                    "integrity list (sandbox/protected.py) with the harness"
                )
        return tuple(present)


_ABSENT = object()


def _fingerprint(value) -> tuple:
    code = getattr(value, "__code__", None)
    return id(value), id(code) if code is not None else None


def _shadowed(instances: Sequence[object]) -> str | None:
    """The first method or property of a harness object's class that an attribute of the object itself shadows
    (`obj.method = hook` answers `obj.method(...)` instead of the protected class function), on `instances` and the
    harness objects they hold: the server's input rotation, address slab, guards. None where none is."""
    seen: set[int] = set()
    for root in instances:
        for held in (root, *_harness_attributes(root)):
            if id(held) in seen:
                continue
            seen.add(id(held))
            found = _shadowing(held)
            if found:
                return found
    return None


def _harness_attributes(obj: object) -> list[object]:
    """The attributes of `obj` that are harness objects, or were: an instance of a solbench class or of a subclass of
    one (a solution can move an object onto a class of its own with `obj.__class__ = Sub`)."""
    try:
        values = list(vars(obj).values())
    except TypeError:  # no __dict__ (slots, a builtin)
        return []
    return [v for v in values if not isinstance(v, type) and any(_ours(k) for k in type(v).__mro__)]


def _ours(cls: type) -> bool:
    return cls.__module__.startswith("solbench.")


def _shadowing(obj: object) -> str | None:
    cls = type(obj)
    bases = [k for k in cls.__mro__ if _ours(k)]
    if bases and not _ours(cls):  # a subclass defined elsewhere: its methods answer the harness's calls
        return f"{bases[0].__name__} (the object's class was replaced by {cls.__qualname__})"
    try:
        names = list(vars(obj))
    except TypeError:
        return None
    for name in names:
        for klass in cls.__mro__:
            member = vars(klass).get(name, _ABSENT)
            if member is _ABSENT:
                continue
            if callable(member) or isinstance(member, (property, staticmethod, classmethod)):
                return f"{cls.__name__}.{name}"
            break
    return None


def _class_attributes(classes: Sequence[type]) -> dict[str, int]:
    return {f"{_name_of(cls)}.{name}": id(value) for cls in classes for name, value in list(vars(cls).items())}


HARNESS_OPS = (
    "aten::_to_copy",
    "aten::add_.Tensor",
    "aten::as_strided",
    "aten::bitwise_and.Scalar",
    "aten::bitwise_and.Tensor",
    "aten::bitwise_and_.Tensor",
    "aten::bitwise_or_.Tensor",
    "aten::bitwise_xor.Tensor",
    "aten::bitwise_xor_.Tensor",
    "aten::clone",
    "aten::copy_",
    "aten::detach",
    "aten::empty.memory_format",
    "aten::empty_like",
    "aten::empty_strided",
    "aten::equal",
    "aten::fill_.Scalar",
    "aten::full",
    "aten::mul.Tensor",
    "aten::mul_.Tensor",
    "aten::ne.Scalar",
    "aten::neg",
    "aten::ones",
    "aten::rand.generator",
    "aten::randint.low_generator",
    "aten::slice.Tensor",
    "aten::t",
    "aten::view",
    "aten::view.dtype",
    "aten::where.self",
    "aten::zero_",
    "aten::zeros_like",
)
"""The operators the harness's own tensor work in the sandbox dispatches (input rotation, the flush, sentinels,
copies of outputs, the channel's encoder); tests/guard/test_runtime.py records them to keep the list whole."""

HARNESS_MODULES = ("solbench.sandbox", "solbench.guard")
"""Packages whose module globals the harness inside the sandbox reads its functions and modules through."""


LIBRARY_MODULES = (
    "torch",
    "torch.nn.functional",
    "torch.linalg",
    "torch.fft",
    "torch.special",
    "torch.nn.init",
    "torch.cuda",
    "math",
    "operator",
)
"""Modules whose functions the harness in the sandbox and references call by name."""


def _library_attributes() -> dict[str, tuple]:
    """Fingerprint of every function, class and module that the library modules hold, however it would be
    replaced (``type(torch).__setattr__(torch, "rsqrt", f)``, ``vars(torch)[...] = f``, a new ``__code__``): a
    replaced one runs the solution's code wherever it is called. Attributes added later are not checked (a lazily
    imported submodule, torch._dynamo, becomes one)."""
    import sys
    import types

    return {
        f"{name}.{attribute}": _fingerprint(value)
        for name in LIBRARY_MODULES
        if (module := sys.modules.get(name)) is not None
        for attribute, value in list(vars(module).items())
        if callable(value) or isinstance(value, types.ModuleType)
    }


def _torch_wrapped(label: str, original: tuple) -> bool:
    """Whether `label` now holds torch's own ``_disable_dynamo`` wrapper of the function it held: importing
    torch._dynamo (torch.compile does) wraps ``torch.manual_seed`` so. The wrapper only calls the original."""
    import sys

    import torch

    module_name, _, attribute = label.rpartition(".")
    current = getattr(sys.modules.get(module_name), attribute, None)
    wrapped = getattr(current, "__wrapped__", None)
    return (
        wrapped is not None
        and _fingerprint(wrapped) == original
        and getattr(current, "__code__", None) is _disable_dynamo_code(torch)
    )


def _disable_dynamo_code(torch) -> object:
    """The code object of torch._disable_dynamo's wrapper (it makes a new function, never a new code object)."""
    return torch._disable_dynamo(_disable_dynamo_code).__code__


def _tensor_methods() -> dict[str, int]:
    """Identity of every attribute of torch.Tensor and its C base: the harness's tensor work calls them
    (`buffer.add_(1)` in the flush), and one replaced runs the solution's code there."""
    import torch

    return {
        f"{cls.__name__}.{name}": id(value)
        for cls in (torch.Tensor, torch._C.TensorBase)
        for name, value in list(vars(cls).items())
    }


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
    return (
        tuple(py_kernels),
        repr(torch._C._dispatch_tls_local_include_set()),
        repr(torch._C._dispatch_tls_local_exclude_set()),
    )


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


def _harness_globals() -> dict[tuple[str, str], int | tuple[str, str]]:
    """Identity of every function, class and module a harness module holds as a global, and the value of every
    plain constant (a flush size, a budget).

    The harness calls through its modules' globals (``time.perf_counter_ns`` through the ``time``
    global of ``timers/cpu.py``), so rebinding a global is as good as replacing the function.
    """
    import sys
    import types

    kept = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)
    constants = (int, float, str, bytes, tuple, frozenset, type(None))
    return {
        (name, attribute): id(value) if isinstance(value, kept) else (type(value).__name__, repr(value))
        for name, module in list(sys.modules.items())
        if module is not None and name.startswith(HARNESS_MODULES)
        for attribute, value in list(vars(module).items())
        if isinstance(value, kept) or (isinstance(value, constants) and not attribute.startswith("__"))
    }


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
    """Fingerprints of the protected entries and classes, the harness's globals and the signal state, taken before
    any solution code runs."""

    protected: dict[str, tuple[Protected, tuple]]
    """Label -> (entry, fingerprint) for every entry of the integrity list that exists here."""
    classes: tuple[type, ...]
    class_attributes: dict[str, int]
    harness_globals: dict[tuple[str, str], int | tuple[str, str]]
    signals: tuple
    audit_hook_attempts: list[str]
    dispatch_tables: dict[str, str]
    tensor_methods: dict[str, int]
    dispatcher: tuple
    native_signals: tuple
    library_attributes: dict[str, tuple]
    instances: tuple[object, ...] = ()
    """The harness objects `_shadowed` walks: the integrity list's, and this guard."""
    instance_classes: tuple[type, ...] = ()
    """Their classes when the snapshot was taken (`obj.__class__ = Sub` moves an object onto another class)."""

    @classmethod
    def snapshot(cls, integrity_list: IntegrityList) -> IntegrityGuard:
        """Raises IntegritySetupError (before changing anything) when an entry of `integrity_list` is missing."""
        protected = {
            entry.label: (entry, _fingerprint(getattr(entry.owner, entry.name))) for entry in integrity_list.resolved()
        }
        attempts: list[str] = []
        _refuse_audit_hooks(attempts)
        classes = tuple(integrity_list.classes)
        guard = cls(
            protected,
            classes,
            _class_attributes(classes),
            _harness_globals(),
            _signal_state(),
            attempts,
            _dispatch_tables(),
            _tensor_methods(),
            _dispatcher_state(),
            _native_signal_state(),
            _library_attributes(),
        )
        guard.instances = (*integrity_list.instances, guard)
        guard.instance_classes = tuple(type(instance) for instance in guard.instances)
        return guard

    def verify(self, when: str) -> None:
        """Raises GuardViolation when anything protected changed. Call it through the class
        (`IntegrityGuard.verify(guard, when)`): an instance attribute `verify` on the guard would answer a call
        through the instance."""
        moved = [type(i).__qualname__ for i, cls in zip(self.instances, self.instance_classes) if type(i) is not cls]
        if moved:
            raise GuardViolation("integrity", f"a harness object was moved onto another class, {moved[0]} ({when})")
        shadowed = _shadowed(self.instances)
        if shadowed:
            raise GuardViolation("integrity", f"{shadowed} is shadowed by an instance attribute ({when})")
        for label, (entry, expected) in self.protected.items():
            current = getattr(entry.owner, entry.name, _ABSENT)
            if current is _ABSENT or _fingerprint(current) != expected:
                raise GuardViolation("integrity", f"{label} was replaced or modified ({when})")
        attributes = _class_attributes(self.classes)
        changed = sorted(
            name
            for name in attributes.keys() | self.class_attributes.keys()
            if attributes.get(name) != self.class_attributes.get(name)
        )
        if changed:
            raise GuardViolation("integrity", f"{changed[0]} was replaced, added or removed ({when})")
        now = _harness_globals()
        for (module, attribute), identity in self.harness_globals.items():
            if now.get((module, attribute)) != identity:
                raise GuardViolation("integrity", f"{module}.{attribute} was rebound or removed ({when})")
        methods = _tensor_methods()
        changed = sorted(
            name
            for name in methods.keys() | self.tensor_methods.keys()
            if methods.get(name) != self.tensor_methods.get(name)
        )
        if changed:
            raise GuardViolation("integrity", f"torch.{changed[0]} was replaced, added or removed ({when})")
        library = _library_attributes()
        changed = sorted(
            name
            for name, expected in self.library_attributes.items()
            if library.get(name) != expected and not _torch_wrapped(name, expected)
        )
        if changed:
            raise GuardViolation("integrity", f"{changed[0]} was replaced or removed ({when})")
        if _dispatcher_state() != self.dispatcher:
            raise GuardViolation(
                "integrity",
                "the dispatcher was changed: the Python dispatcher turned on, a Python "
                "kernel (py_impl) on an operator the harness uses, or this thread's "
                f"dispatch keys ({when})",
            )
        if _native_signal_state() != self.native_signals:
            raise GuardViolation(
                "integrity",
                f"a signal handler or POSIX timer was installed from native code (sigaction, timer_create) ({when})",
            )
        tables = _dispatch_tables()
        changed = [op for op, table in self.dispatch_tables.items() if tables.get(op) != table]
        if changed:
            raise GuardViolation(
                "integrity",
                f"a kernel was registered over {changed[0]}, which the harness uses "
                f"(torch.library on an aten operator) ({when})",
            )
        if _signal_state() != self.signals:
            raise GuardViolation("integrity", f"a signal handler or interval timer was installed ({when})")
        mode = _active_modes() or _active_hooks()
        if mode:
            raise GuardViolation("integrity", f"{mode} ({when})")
        if self.audit_hook_attempts:
            raise GuardViolation(
                "integrity",
                f"the solution tried to add an audit hook (sys.addaudithook), which "
                f"would run its code inside the harness's own work ({when})",
            )
