"""What the sandbox's integrity guard protects: the objects the measurement relies on, handed over as objects.

Each entry names its owner (a module or a class) by the object itself and the attribute it
protects, so a renamed or moved function makes the guard refuse to start (IntegritySetupError)
instead of dropping its check. An entry may be absent only where it is listed as optional, with
the reason and the condition under which this environment must have it.
"""

from __future__ import annotations

import _thread
import builtins
import concurrent.futures.thread
import importlib
import os
import socket
import sys
import threading
import time
import weakref

from solbench import torch_threads
from solbench.guard import runtime, threads
from solbench.guard.runtime import IntegrityList, OptionalProtected, Protected
from solbench.sandbox import (
    addresses,
    calling,
    channel_guard,
    flush,
    line_flush,
    protocol,
    rotation,
    sample_stream,
    wire,
)
from solbench.sandbox.timers import cpu, cuda_events, cuda_profiler

measure = importlib.import_module("solbench.sandbox.measure")  # the package's `measure` is the function

_SERVER_METHODS = (
    "call",
    "time",
    "_invoke",
    "_prepare",
    "_between_calls",
    "_check_tensors_untouched",
    "_check_returned",
    "_operands",
)
"""The methods of the sandbox's request server that run in or around the timed region."""


def _entries(owner: object, *names: str) -> list[Protected]:
    return [Protected(owner, name) for name in names]


def _channel_guard_entries(server: object | None) -> list[Protected]:
    """The running server's channel guard and what it compares (a solution that pointed the guard at its own proxy
    would pass every check), where there is one."""
    guard = getattr(server, "channel_guard", None)
    if server is None or guard is None:
        return []
    return [Protected(server, "channel_guard"), *_entries(guard, "_fd", "_identity", "_private")]


def _line_flush_entries(server: object | None) -> list[Protected]:
    """The running server's native flush helper (a solution that swaps it, or the function pointer it calls,
    would leave the operands warm), where there is one."""
    if server is None:
        return []
    entries = [Protected(server, "line_flush")]
    line_flush = getattr(server, "line_flush", None)
    if line_flush is not None:
        entries += _entries(line_flush, "_flush", "_count")
    return entries


def integrity_list(server: type, server_instance: object | None = None) -> IntegrityList:
    """The integrity list of a sandbox whose request server is the class `server` (child.SandboxServer, as it
    runs: the child is `__main__`, so the class is handed over rather than imported again), and
    `server_instance`, the running server, whose native flush helper is protected too."""
    import torch

    new_threads = sys.version_info >= (3, 13)
    return IntegrityList(
        required=(
            *_entries(
                time,
                "perf_counter",
                "perf_counter_ns",
                "monotonic",
                "monotonic_ns",
                "clock_gettime",
                "clock_gettime_ns",
                "sleep",
            ),
            *_entries(builtins, "isinstance", "type", "len", "getattr", "id"),
            *_entries(os, "listdir", "fstat", "urandom"),
            *_entries(sys, "_current_frames"),
            *_entries(_thread, "start_new_thread"),
            *_entries(socket.socket, "sendall", "recv_into"),
            *_entries(torch.Tensor, "clone", "copy_", "cpu", "contiguous", "view", "numel", "detach"),
            # What the fresh-address slab and the returned-output check use between calls (addresses.py).
            *_entries(
                torch.Tensor,
                "as_strided",
                "__getitem__",
                "untyped_storage",
                "data_ptr",
                "element_size",
                "stride",
                "is_contiguous",
            ),
            *_entries(torch.UntypedStorage, "data_ptr"),
            *_entries(weakref, "ref"),
            *_entries(
                torch,
                "equal",
                "full",
                "rand",
                "randint",
                "zeros_like",
                "empty",
                "empty_like",
                "ones",
                "where",
                "Generator",
                "add",
                "set_num_threads",
                "get_num_threads",
            ),
            # Defined on every torch build, CPU-only ones included; they only fail when called there.
            *_entries(torch.cuda, "synchronize"),
            *_entries(torch.cuda.Event, "record", "elapsed_time", "synchronize"),
            *_entries(measure, "measure", "_should_stop", "_os_random_below"),
            *_entries(calling, "call_with_convention", "normalize_outputs", "sentinel_outputs", "materialized"),
            *_entries(wire, "send_message", "_encode_value"),
            *_entries(sample_stream, "send_sample", "send_seed", "no_hooks"),
            *_entries(protocol, "encode", "parse_request"),
            *_entries(rotation.InputRotation, "prepare", "mutated", "reserve"),
            *_entries(addresses.ShiftingSlab, "fresh", "warmup", "reserve", "_grow", "_views"),
            *_entries(addresses.ReturnedStorages, "check"),
            *_entries(channel_guard.ChannelGuard, "intact", "check", "refuse_and_exit"),
            *_entries(channel_guard, "_identity"),
            *_entries(rotation, "_perturb", "_flip_signs", "_negate_codes", "_complement_nibbles"),
            *_entries(cpu.CpuTimer, "time_call"),
            *_entries(cuda_events.CudaEventTimer, "time_call"),
            *_entries(cuda_profiler.CudaProfilerTimer, "time_call"),
            *_entries(flush.CpuCacheFlusher, "flush"),
            *_entries(flush.OperandCacheFlusher, "flush"),
            *_entries(flush.CudaCacheFlusher, "flush"),
            *_entries(flush, "flusher_for"),
            *_entries(line_flush.LineFlushHelper, "flush_ranges", "count_lines"),
            *_entries(line_flush, "tensor_ranges", "merge_spans", "_arrays"),
            *_line_flush_entries(server_instance),
            *_channel_guard_entries(server_instance),
            *_entries(server, *_SERVER_METHODS),
            *_entries(runtime.IntegrityGuard, "verify"),
            *_entries(
                threads.ThreadGuard,
                "settle",
                "begin_gap",
                "check_gap",
                "_solution_cpu_s",
                "_busy",
                "_probe",
                "_find_native_threads",
                "_thread_count_unchanged",
                "_natives_still",
                "call_starts",
                "call_raised",
                "call_returned",
                "check_kept_pools",
                "_refuse_unjoined",
                "_queued",
                "_waits_with_nothing_pending",
            ),
            *_entries(threads, "_task_ids", "_cpu_time_s", "harness_thread_count", "at_most_threads", "_kept"),
            # Wrapped by the thread guard: the joins a call makes, and the work it hands to a pool, are recorded.
            *_entries(threading.Thread, "join"),
            *_entries(concurrent.futures.thread.ThreadPoolExecutor, "submit"),
            *_entries(torch_threads, "at_most_threads"),
        ),
        optional=(
            # Python 3.13 starts threads through start_joinable_thread, and threading no longer keeps
            # _start_new_thread; earlier versions have only the latter pair.
            OptionalProtected(_thread, "start_joinable_thread", reason="Python 3.13+", expected=new_threads),
            OptionalProtected(threading, "_start_joinable_thread", reason="Python 3.13+", expected=new_threads),
            OptionalProtected(threading, "_start_new_thread", reason="Python before 3.13", expected=not new_threads),
        ),
        # A reply is built and encoded through these classes' validators and serializers after the last check of a
        # request ran: one replaced (a property over `samples_s`) would rewrite what the parent reads.
        classes=protocol.CLASSES,
        instances=(server_instance,) if server_instance is not None else (),
    )
