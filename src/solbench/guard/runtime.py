"""Runtime integrity checks that run inside the sandbox, around the solution's code.

The harness inside the sandbox shares an interpreter with the solution, so the solution could
replace the timer, the functions that copy outputs, or the channel's encoder. Identities (and
code objects) of those functions are recorded before the solution is imported and compared after
the import, after every call and after the timed loop. Threads left running after a call are
accounted for by `threads.py`.
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
    "torch.cuda.Event.record", "torch.cuda.Event.elapsed_time", "torch.cuda.Event.synchronize",
    "socket.socket.sendall", "socket.socket.recv_into",
    "solbench.sandbox.measure.measure", "solbench.sandbox.measure._should_stop",
    "solbench.sandbox.calling.call_with_convention", "solbench.sandbox.calling.normalize_outputs",
    "solbench.sandbox.calling.sentinel_outputs", "solbench.sandbox.wire.send_message",
    "solbench.sandbox.wire._encode_value", "solbench.sandbox.rotation.InputRotation.prepare",
    "solbench.sandbox.rotation.InputRotation.mutated", "solbench.sandbox.timers.cpu.CpuTimer.time_call",
    "solbench.sandbox.timers.cuda_events.CudaEventTimer.time_call",
    "solbench.sandbox.timers.cuda_profiler.CudaProfilerTimer.time_call",
    "solbench.sandbox.flush.CpuCacheFlusher.flush", "solbench.sandbox.flush.CudaCacheFlusher.flush",
    "solbench.sandbox.child.SandboxServer.call", "solbench.sandbox.child.SandboxServer.time",
    "solbench.sandbox.child.SandboxServer._invoke", "solbench.sandbox.child.SandboxServer._prepare",
    "solbench.guard.runtime.IntegrityGuard.verify", "solbench.guard.threads.ThreadGuard.settle",
    "solbench.guard.threads.ThreadGuard.check_no_work_since_settle", "solbench.guard.threads.ThreadGuard._busy",
    "sys._current_frames", "time.clock_gettime_ns", "time.sleep",
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


@dataclass
class IntegrityGuard:
    """Fingerprints of the critical functions, taken before any solution code runs."""

    fingerprints: dict[str, tuple]

    @classmethod
    def snapshot(cls) -> "IntegrityGuard":
        fingerprints = {}
        for path in CRITICAL:
            try:
                fingerprints[path] = _fingerprint(_resolve(path))
            except (ImportError, AttributeError):
                continue
        return cls(fingerprints)

    def verify(self, when: str) -> None:
        for path, expected in self.fingerprints.items():
            try:
                current = _fingerprint(_resolve(path))
            except (ImportError, AttributeError):
                current = None
            if current != expected:
                raise GuardViolation("integrity", f"{path} was replaced or modified ({when})")
