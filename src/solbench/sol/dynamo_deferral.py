"""An analysis without importing torch._dynamo where only torch's compile guards would import it.

Many of PyTorch's Python meta kernels (the `torch._refs` behind `masked_fill`, `tril`, `cumsum`, type promotion
and others) are wrapped by `torch._disable_dynamo`. On its first call such a wrapper imports torch._dynamo (about a
second, the largest one-time cost of a fresh process's first analysis) only to build the guard that keeps a
compiler tracing the caller out of the function; it keeps that guard on the function (`__dynamo_disable`) and
calls it from then on. The analysis compiles nothing, so the function itself is what the guard would run. While
an analysis runs with torch._dynamo not yet imported, `dynamo_import_deferred` gives each wrapper its function as
that guard, and takes it back afterwards: later calls build torch's own guard, so a process that compiles after
an analysis gets torch's behaviour. Where torch._dynamo is imported anyway (fake tensors import it), nothing
changes; where torch's wrapper changes shape, nothing is deferred (the import is paid, results are the same).
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

GUARD_ATTRIBUTE = "__dynamo_disable"
"""Where torch's `_disable_dynamo` wrapper keeps the guarded function (torch/_compile.py)."""


@contextmanager
def dynamo_import_deferred() -> Iterator[None]:
    """Inside: torch's `_disable_dynamo` wrappers call their function without importing torch._dynamo.

    Only in a process with one thread (the CLI, a batch worker's fresh process): the guards are the process's, and
    another thread compiling meanwhile (an agent rollout, the env server) would trace into functions torch means
    to keep out of its graphs. A process with threads is long-lived and pays the import once."""
    if "torch._dynamo" in sys.modules or threading.active_count() > 1:
        yield
        return
    deferred = []
    for function in _guarded_functions():
        if getattr(function, GUARD_ATTRIBUTE, None) is None:
            setattr(function, GUARD_ATTRIBUTE, function)
            deferred.append(function)
    try:
        yield
    finally:
        for function in deferred:
            if getattr(function, GUARD_ATTRIBUTE, None) is function:
                delattr(function, GUARD_ATTRIBUTE)


@cache
def _guarded_functions() -> tuple[types.FunctionType, ...]:
    """The functions inside torch's `_disable_dynamo` wrappers (a few hundred, made when torch is imported),
    found once: the wrappers share one code object, and the garbage collector knows every function using it."""
    import gc

    from torch import _compile

    code = next(
        (
            constant
            for constant in _compile._disable_dynamo.__code__.co_consts
            if isinstance(constant, types.CodeType) and "fn" in constant.co_freevars
        ),
        None,
    )
    if code is None:
        return ()
    position = code.co_freevars.index("fn")
    found = []
    for wrapper in gc.get_referrers(code):
        if isinstance(wrapper, types.FunctionType) and wrapper.__code__ is code and wrapper.__closure__:
            function = wrapper.__closure__[position].cell_contents
            if isinstance(function, types.FunctionType):
                found.append(function)
    return tuple(found)
