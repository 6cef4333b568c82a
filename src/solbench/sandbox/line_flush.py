"""The native cache-line flush helper: evicts exactly the lines of given byte ranges (clflushopt/clflush, dc civac).

A GPU's L2 flush leaves the host's code warm; on a CPU, streaming 64 MiB through the caches
evicts the interpreter's and the dispatcher's working set together with the data, so a small
kernel's timing measures the refill of code, not the kernel. This helper flushes only the
operands' lines: data cold, code warm.

The C source lives here (so `harness_version`, which hashes the harness's .py files, changes with
it). It is compiled once with the system C compiler (``$CC``, else ``cc``) into solbench's cache
folder (`cache_dir() / "native"`), named by a hash of the source, the compiler and the machine, and
loaded with ctypes. The trusted parent compiles it and copies it into each sandbox's working
directory; the sandbox loads it before any solution code runs and then unlinks the copy, so a
solution cannot rewrite the file behind the mapping. Where no compiler or no supported instruction
set exists, `load_helper` says why and the caller falls back to the streaming flush (recorded in
the trace).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HELPER_FILE_NAME = "solbench_line_flush.so"
"""The helper's name inside a sandbox's working directory."""

C_SOURCE = r"""
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static int use_clflushopt = -1;

static size_t line_bytes(void) {
    unsigned int a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        size_t size = ((b >> 8) & 0xff) * 8;  /* CLFLUSH line size, in 8-byte units */
        if (size) return size;
    }
    return 64;
}

static void prepare(void) {
    if (use_clflushopt < 0) {
        unsigned int a = 0, b = 0, c = 0, d = 0;
        use_clflushopt = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) ? 1 : 0;
    }
}

static inline void flush_line(uintptr_t p) {
    if (use_clflushopt) __asm__ volatile("clflushopt (%0)" :: "r"(p) : "memory");
    else __asm__ volatile("clflush (%0)" :: "r"(p) : "memory");
}

/* clflushopt is ordered only by fences; mfence orders clflush too (and every store before it). */
static inline void fence(void) { __asm__ volatile("mfence" ::: "memory"); }

#elif defined(__aarch64__)

static size_t line_bytes(void) {
    uint64_t ctr;
    __asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
    return (size_t)4 << ((ctr >> 16) & 0xf);  /* DminLine: log2 of the smallest data line, in 4-byte words */
}

static void prepare(void) {}

/* Clean and invalidate to the point of coherency: the line leaves every cache level. */
static inline void flush_line(uintptr_t p) { __asm__ volatile("dc civac, %0" :: "r"(p) : "memory"); }
static inline void fence(void) { __asm__ volatile("dsb ish" ::: "memory"); }

#else
#error "no cache-line flush instruction known for this architecture"
#endif

size_t solbench_line_bytes(void) { return line_bytes(); }

int solbench_uses_clflushopt(void) {
#if defined(__x86_64__) || defined(__i386__)
    prepare();
    return use_clflushopt;
#else
    return 0;
#endif
}

/* Every line that holds a byte of [starts[i], starts[i] + lengths[i]), for each range; returns the lines.
   With dry_run set nothing is flushed: the same loop only counts, so tests can check the coverage. */
static size_t walk(const uintptr_t *starts, const size_t *lengths, size_t count, int dry_run) {
    size_t line = line_bytes(), lines = 0;
    prepare();
    for (size_t i = 0; i < count; i++) {
        if (lengths[i] == 0) continue;
        uintptr_t first = starts[i] & ~(uintptr_t)(line - 1);
        uintptr_t end = starts[i] + lengths[i];
        for (uintptr_t p = first; p < end; p += line) {
            if (!dry_run) flush_line(p);
            lines++;
        }
    }
    if (!dry_run) fence();
    return lines;
}

size_t solbench_flush_ranges(const uintptr_t *starts, const size_t *lengths, size_t count) {
    return walk(starts, lengths, count, 0);
}

size_t solbench_count_lines(const uintptr_t *starts, const size_t *lengths, size_t count) {
    return walk(starts, lengths, count, 1);
}
"""


class HelperUnavailable(Exception):
    """The native helper cannot be built or loaded here; the message says why (for the trace).

    Not a SolbenchError: the evaluation goes on with the streaming flush and records the reason.
    """


def _compiler() -> str | None:
    name = os.environ.get("CC") or "cc"
    return shutil.which(name) or (shutil.which("gcc") if name == "cc" else None)


def helper_path(folder: Path) -> Path:
    """Where the helper for this source, compiler and machine is kept under `folder`."""
    material = f"{C_SOURCE}\0{_compiler()}\0{platform.machine()}\0{platform.system()}".encode()
    return folder / f"line_flush-{hashlib.sha256(material).hexdigest()[:16]}.so"


def build_helper(folder: Path | None = None) -> Path:
    """The compiled helper, compiled now if it is not in `folder` (default: solbench's cache folder, `native/`).

    Written to a temporary name and renamed, so concurrent evaluations never load half a file.
    Raises HelperUnavailable with the reason (no compiler, a compile error, an architecture with
    no flush instruction known here).
    """
    if folder is None:
        from solbench.cache_dir import cache_dir

        folder = cache_dir() / "native"
    target = helper_path(folder)
    if target.is_file():
        return target
    compiler = _compiler()
    if compiler is None:
        raise HelperUnavailable(
            f"no C compiler ({os.environ.get('CC') or 'cc'}) on PATH to build the cache-line flush helper"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HelperUnavailable(f"cannot create {folder}: {error.strerror or error}") from None
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as scratch:
        source = Path(scratch) / "line_flush.c"
        source.write_text(C_SOURCE)
        built = Path(scratch) / HELPER_FILE_NAME
        try:
            result = subprocess.run(
                [compiler, "-O2", "-shared", "-fPIC", "-o", str(built), str(source)],
                capture_output=True,
                text=True,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise HelperUnavailable(f"the C compiler {compiler} did not run: {error}") from None
        if result.returncode != 0:
            first = (result.stderr.strip().splitlines() or ["no message"])[0]
            raise HelperUnavailable(f"the cache-line flush helper did not compile ({compiler}): {first}")
        built.chmod(0o644)
        os.replace(built, target)
    return target


@dataclass(frozen=True)
class LineFlushHelper:
    """The loaded helper. `flush_ranges` evicts every line of the ranges and fences; `count_lines` only counts."""

    path: str
    line_bytes: int
    instruction: str
    _flush: Callable[..., int]
    _count: Callable[..., int]

    def flush_ranges(self, ranges: list[tuple[int, int]]) -> int:
        """Flush every line of each (start address, byte length); returns the number of lines flushed."""
        return self._flush(*_arrays(ranges))

    def count_lines(self, ranges: list[tuple[int, int]]) -> int:
        """The lines `flush_ranges` would flush for `ranges`, computed by the same native loop."""
        return self._count(*_arrays(ranges))


def _arrays(ranges: list[tuple[int, int]]):
    count = len(ranges)
    starts = (ctypes.c_size_t * count)(*(start for start, _ in ranges))
    lengths = (ctypes.c_size_t * count)(*(length for _, length in ranges))
    return starts, lengths, ctypes.c_size_t(count)


def load_helper(path: Path | str) -> LineFlushHelper:
    """Load a compiled helper; raises HelperUnavailable when it cannot be loaded."""
    try:
        library = ctypes.CDLL(str(path))
    except OSError as error:
        raise HelperUnavailable(f"cannot load the cache-line flush helper: {error}") from None
    for name in ("solbench_flush_ranges", "solbench_count_lines", "solbench_line_bytes"):
        getattr(library, name).restype = ctypes.c_size_t
    library.solbench_uses_clflushopt.restype = ctypes.c_int
    machine = platform.machine()
    instruction = (
        "dc civac"
        if machine in ("aarch64", "arm64")
        else "clflushopt"
        if library.solbench_uses_clflushopt()
        else "clflush"
    )
    return LineFlushHelper(
        path=str(path),
        line_bytes=int(library.solbench_line_bytes()),
        instruction=instruction,
        _flush=library.solbench_flush_ranges,
        _count=library.solbench_count_lines,
    )


def tensor_ranges(tensors) -> list[tuple[int, int]]:
    """The byte ranges the views `tensors` span (non-tensors skipped), merged where they overlap or touch.

    What a view spans, not its whole storage: the live inputs and DPS buffers are views into a slab
    that moves them on every call (addresses.py), and a call reads its own slot, not the slab.
    """
    import torch

    from solbench.sandbox.addresses import span_bytes

    spans = []
    for value in tensors:
        if not isinstance(value, torch.Tensor) or value.device.type != "cpu":
            continue
        length = span_bytes(value.shape, value.stride(), value.element_size())
        if length:
            spans.append((value.data_ptr(), value.data_ptr() + length))
    return [(start, end - start) for start, end in merge_spans(spans)]


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Half-open [start, end) spans sorted and merged where they overlap or touch."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def lines_covering(start: int, length: int, line: int) -> int:
    """How many `line`-byte cache lines hold a byte of [start, start + length): the count the helper must reach."""
    if length <= 0:
        return 0
    return (start + length - 1) // line - start // line + 1
