"""Loop shortcuts: a reference loop whose iterations repeat the same work is recorded a few times, not thousands.

A recurrence written in Python (`for t in range(seq_len)`: an RWKV or SSM scan) records the same
dozen ATen calls per step, and recording costs tens of microseconds per call: seconds per workload
for work whose cost is the same at every step. `with_loop_shortcuts` rewrites the reference's
source (trusted code the analyzer imports anyway) so that each eligible `for NAME in range(...)`
loop iterates through a `Loop`. Under an `OpRecorder`, a `Loop` runs the iterations one by one
until one iteration leaves the loop's state as it found it (every local and global of the
function, tensors by shape, strides, dtype, the precision they carry, the input rows they view,
their aliasing and mask tracking) and records the same ops as the iteration before it, with
nothing value-dependent in between. It then appends that iteration's recorded ops once for every
iteration but the last, skips running them, and runs the last iteration for real, which must
record the same ops and leave the same state again. The recording is then the one a full run
makes, op for op in the same order.

It refuses, and the loop runs in full, whenever that cannot be shown:

- statically, for a loop with `break`, `continue`, `return`, `yield`, `try`, `global`,
  `nonlocal`, a nested function, an `else` clause, or a loop variable used other than as a
  plain index (`x[t]`, `x[:, t]`; not `t + 1`, `x[t:t + 2]`, `range(t)`, `f(t)`);
- at run time, when an indexed value is not a tensor, when the state does not settle, when a
  local or global is something other than tensors, numbers, strings, containers of them, modules,
  functions and classes (an object's attributes are not followed), or when an iteration computes
  on real values, reads a value (`.item()`, `nonzero`), reads only some rows of an input, or
  gathers (compulsory bytes would depend on the index).

If the last iteration differs from the repeated one after all, the run stops with
`LoopShortcutMismatch`, and the analysis runs the reference again without shortcuts.
"""

from __future__ import annotations

import ast
import sys
import types

OWN_PREFIX = "_solbench_"
"""Every name the rewriting adds starts with this (loop helpers, module aliases): a reference using one is left be."""
LOOP_PREFIX = "_solbench_loop_"
MODULE_ALIAS = "_solbench_loops"
MIN_ITERATIONS = 4
"""Loops shorter than this run in full: the shortcut needs two probe iterations and the last one."""
MAX_PROBES = 8
"""Iterations compared before a loop whose state does not settle runs the rest in full, uncompared."""
_MAX_ELEMENTS = 10_000
"""Containers in the state with more elements than this (in all) are not compared: the loop runs in full."""


class LoopShortcutMismatch(BaseException):
    """The last iteration of a shortcut loop did not repeat the probed one: the recording is not that of a full
    run, and the analysis must run the reference again without shortcuts. A BaseException so that neither the
    reference's own `except Exception` nor the analyzer's fallbacks between recording strategies swallow it."""


# --- the source transformation ------------------------------------------------------------------------------

_REFUSED_NODES = (
    ast.Break,
    ast.Continue,
    ast.Return,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
    ast.Global,
    ast.Nonlocal,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.AsyncFor,
    ast.AsyncWith,
)
if hasattr(ast, "TryStar"):
    _REFUSED_NODES += (ast.TryStar,)


def with_loop_shortcuts(source: str) -> str | None:
    """The source with every eligible `for NAME in range(...)` loop iterating through a `Loop`, or None when no
    loop is eligible (or the source does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    rewriter = _Rewriter()
    tree = rewriter.visit(tree)
    if not rewriter.count:
        return None
    insert_import(tree, __name__, MODULE_ALIAS)
    return ast.unparse(ast.fix_missing_locations(tree))


def insert_import(tree: ast.Module, module: str, alias: str) -> None:
    """`import module as alias` at the top of `tree`, after its docstring and `from __future__` imports."""
    body = tree.body
    first = body[0] if body else None
    docstring = (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    )
    position = 1 if docstring else 0  # the module docstring stays first
    while position < len(body):
        statement = body[position]
        if not (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"):
            break
        position += 1
    body.insert(position, ast.Import(names=[ast.alias(name=module, asname=alias)]))


class _Rewriter(ast.NodeTransformer):
    def __init__(self):
        self.count = 0

    def visit_For(self, node: ast.For):
        if not _eligible(node):
            self.generic_visit(node)  # a loop inside may still be eligible
            return node
        target = node.target
        assert isinstance(target, ast.Name)  # _eligible admits only a plain name
        loop_name = f"{LOOP_PREFIX}{self.count}"
        self.count += 1
        node.body = [_GuardIndexing(target.id, loop_name).visit(statement) for statement in node.body]
        make = ast.Assign(
            targets=[ast.Name(id=loop_name, ctx=ast.Store())],
            value=ast.Call(
                func=ast.Attribute(value=ast.Name(id=MODULE_ALIAS, ctx=ast.Load()), attr="Loop", ctx=ast.Load()),
                args=[node.iter, ast.Constant(target.id)],
                keywords=[],
            ),
        )
        node.iter = ast.Name(id=loop_name, ctx=ast.Load())
        return [ast.copy_location(make, node), node]


def _eligible(node: ast.For) -> bool:
    if not isinstance(node.target, ast.Name) or node.orelse:
        return False
    call = node.iter
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "range"
        and not call.keywords
        and 1 <= len(call.args) <= 3
    ):
        return False
    name = node.target.id
    allowed: set[int] = set()  # ids of the Name nodes that are plain indices
    for statement in node.body:
        for child in ast.walk(statement):
            if isinstance(child, _REFUSED_NODES) and not _inside_nested_loop(child, statement):
                return False
            if isinstance(child, ast.Subscript):
                index = child.slice
                for element in index.elts if isinstance(index, ast.Tuple) else [index]:
                    if isinstance(element, ast.Name) and element.id == name:
                        allowed.add(id(element))
    for statement in node.body:
        for child in ast.walk(statement):
            if (
                isinstance(child, ast.Name)
                and child.id == name
                and (not isinstance(child.ctx, ast.Load) or id(child) not in allowed)
            ):
                return False
            if isinstance(child, (ast.Name, ast.arg)) and str(getattr(child, "id", "")).startswith(OWN_PREFIX):
                return False
    return True


def _inside_nested_loop(node: ast.AST, statement: ast.AST) -> bool:
    """`break` and `continue` of a loop nested in the body leave the outer iteration's course alone; everything
    else refused is refused anywhere in the body."""
    if not isinstance(node, (ast.Break, ast.Continue)):
        return False
    for candidate in ast.walk(statement):
        if isinstance(candidate, (ast.For, ast.While)):
            if any(inner is node for part in candidate.body for inner in ast.walk(part)):
                return True
    return False


class _GuardIndexing(ast.NodeTransformer):
    """`x[..., t, ...]` becomes `loop.tensor(x)[..., t, ...]`: the shortcut holds only where indexing by the loop
    variable gives the same shape for every value, which a tensor does and a list of tensors does not."""

    def __init__(self, name: str, loop_name: str):
        self.name, self.loop_name = name, loop_name

    def visit_Subscript(self, node: ast.Subscript):
        self.generic_visit(node)
        index = node.slice
        elements = index.elts if isinstance(index, ast.Tuple) else [index]
        if any(isinstance(e, ast.Name) and e.id == self.name for e in elements):
            node.value = ast.Call(
                func=ast.Attribute(value=ast.Name(id=self.loop_name, ctx=ast.Load()), attr="tensor", ctx=ast.Load()),
                args=[node.value],
                keywords=[],
            )
        return node


# --- the run-time side ----------------------------------------------------------------------------------------


class Loop:
    """Iterates a `range` like the plain loop, but under a recorder that allows it, skips the repeated iterations
    (see the module docstring). Without one (the reference run for real, or by the precision check), it is
    the plain range."""

    def __init__(self, values, variable: str):
        self._values = values
        self._variable = variable
        self._refused = False

    def tensor(self, value):
        """The value indexed by the loop variable, unchanged; a non-tensor refuses the shortcut."""
        import torch

        if not isinstance(value, torch.Tensor):
            self._refused = True
        return value

    def __iter__(self):
        import torch

        recorder = _active_recorder()
        if (
            recorder is None
            or not isinstance(self._values, range)
            or len(self._values) < MIN_ITERATIONS
            or torch.is_grad_enabled()
        ):  # a later backward would replay only the iterations that ran
            return iter(self._values)
        return self._iterate(recorder)

    def _iterate(self, recorder):
        values = self._values
        count = len(values)
        ops = recorder.recording.ops
        frame = sys._getframe(1)
        before = _state_objects(frame)
        previous_state = _fingerprint(frame, recorder, before, len(ops), self._variable)
        previous_ops = None
        outer = recorder.loop_probe_begin()
        try:
            for index in range(count):
                start, events = len(ops), recorder.loop_events
                recorder.loop_floor = start
                yield values[index]
                frame = sys._getframe(1)
                iteration_ops = ops[start:]
                pure = recorder.loop_events == events and not self._refused
                if not pure:
                    break
                state = _fingerprint(frame, recorder, before, start, self._variable)
                if (
                    previous_ops is not None
                    and state == previous_state
                    and iteration_ops == previous_ops
                    and index + 2 < count
                ):
                    skipped = count - index - 2
                    ops.extend(iteration_ops * skipped)
                    start, events = len(ops), recorder.loop_events
                    recorder.loop_floor = start
                    yield values[count - 1]
                    frame = sys._getframe(1)
                    if (
                        recorder.loop_events != events
                        or self._refused
                        or ops[start:] != iteration_ops
                        or _fingerprint(frame, recorder, before, start, self._variable) != state
                    ):
                        raise LoopShortcutMismatch(
                            f"the last of {count} iterations did not repeat the one recorded {skipped} times"
                        )
                    return
                previous_state, previous_ops = state, iteration_ops
                if index + 1 >= MAX_PROBES:  # not settling (a growing list, a counter): stop comparing states
                    break
            else:
                return
        finally:
            recorder.loop_probe_end(outer)
        yield from values[index + 1 :]  # not shown to repeat: the rest runs in full


def _active_recorder():
    """The innermost `OpRecorder` on the dispatch mode stack that allows loop shortcuts, or None."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    from solbench.sol.recorder import OpRecorder

    for mode in reversed(_get_current_dispatch_mode_stack()):
        if isinstance(mode, OpRecorder):
            return mode if mode.loop_shortcuts else None
    return None


def _state_objects(frame) -> set[int]:
    """ids of the tensors the loop's state holds before it starts (their aliases stay recognisable)."""
    import torch

    found: set[int] = set()
    for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
        if isinstance(value, torch.Tensor):
            found.add(id(value))
        elif isinstance(value, (list, tuple)) and len(value) <= _MAX_ELEMENTS:
            found.update(id(v) for v in value if isinstance(v, torch.Tensor))
    return found


_CONSTANT_TYPES = (
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    type,
    types.MethodWrapperType,
    types.BuiltinMethodType,
)


class _Unknown:
    """A state this module cannot compare: unequal to everything, so the loop runs in full."""

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__


def _fingerprint(frame, recorder, before: set[int], start: int, variable: str):
    """The loop's state as far as the rest of the recording can tell: every local (the loop's own helper and
    variable excepted) and global, tensors by their recorded properties, and the defaults, closures and class
    attributes of the functions and classes the reference defines (where hidden state can live)."""
    local_items = sorted((k, v) for k, v in frame.f_locals.items() if k != variable and not k.startswith(LOOP_PREFIX))
    global_items = sorted(
        (k, v)
        for k, v in frame.f_globals.items()
        if not (k.startswith("__") or k.startswith(OWN_PREFIX))
        and (not isinstance(v, _CONSTANT_TYPES) or _defined_in(v, frame.f_globals))
    )
    walk = _Walk(recorder, before, start, frame.f_globals.get("__name__"), frame.f_code.co_filename)
    try:
        return tuple((k, walk.value(v)) for k, v in local_items + global_items)
    except _Unsupported:
        return _Unknown()


class _Unsupported(Exception):
    pass


def _defined_in(value, module_globals: dict) -> bool:
    return isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == module_globals.get(
        "__name__"
    )


class _Walk:
    """One fingerprint's traversal: tensor labels shared across the state, and a budget of values visited."""

    def __init__(self, recorder, before: set[int], start: int, module: str | None, file: str | None):
        self.recorder, self.before, self.start, self.module, self.file = recorder, before, start, module, file
        self.labels: dict[int, tuple] = {}
        self.budget = _MAX_ELEMENTS
        self.seen: set[int] = set()

    def value(self, value):
        import torch

        self.budget -= 1
        if self.budget < 0:
            raise _Unsupported
        if isinstance(value, torch.Tensor):
            return self.tensor(value)
        if (
            value is None
            or value is Ellipsis
            or isinstance(
                value,
                (
                    bool,
                    int,
                    float,
                    complex,
                    str,
                    bytes,
                    torch.dtype,
                    torch.device,
                    torch.layout,
                    torch.memory_format,
                    range,
                    slice,
                ),
            )
        ):
            return type(value), value
        if isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == self.module:
            wrapped = getattr(value, "__wrapped__", None)
            if (
                wrapped is not None
                and isinstance(value, types.FunctionType)
                and value.__code__.co_filename != self.file
            ):
                # a library decorator's wrapper (`@torch.no_grad()`), named after the reference's function by
                # functools.wraps: its own closure holds the decorator's machinery, the state is the wrapped one's
                return "wrapper", id(value), self.value(wrapped)
            return self._own_definition(value)
        if isinstance(value, _CONSTANT_TYPES):
            return "constant", id(value)
        kind = type(value)
        if kind in (list, tuple, torch.Size):
            return kind, tuple(self.value(v) for v in value)
        if kind is dict:
            return kind, tuple((k, self.value(v)) for k, v in value.items())
        raise _Unsupported

    def tensor(self, value) -> tuple:
        return self.recorder.loop_fingerprint(value, self.before, self.labels, self.start)

    def _own_definition(self, value):
        """A function or class of the reference: its identity, and the state it can hide (a function's defaults
        and closure cells, a class's attributes), each compared once per fingerprint."""
        if id(value) in self.seen:
            return "seen", id(value)
        self.seen.add(id(value))
        if isinstance(value, type):
            attributes = tuple(
                (k, self.value(v.__func__ if isinstance(v, (staticmethod, classmethod)) else v))
                for k, v in sorted(vars(value).items())
                if not k.startswith("__") and not isinstance(v, property)
            )
            return "class", id(value), attributes
        cells = tuple(self.value(cell.cell_contents) for cell in value.__closure__ or () if _cell_is_set(cell))
        return ("function", id(value), self.value(value.__defaults__), self.value(value.__kwdefaults__), cells)


def _cell_is_set(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - reading an empty cell raises ValueError: that read is the test
    except ValueError:
        return False
    return True
