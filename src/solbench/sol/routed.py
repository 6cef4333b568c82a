"""Routed loops: a loop over experts costs its floating-point body from a template, not from recording it each time.

A mixture-of-experts reference written in Python (`for e in range(num_experts)`: `torch.where` on the
routing mask, then the expert's matrix products on the tokens routed to it) records a dozen ATen calls
per expert, at tens of microseconds each, on shapes that differ from one expert to the next with the
number of tokens routed to it. `sol/loops.py`'s shortcut does not apply (no two iterations are alike);
this one does. The rewriter (`with_routed_loops`, run after the loop shortcut's) splits the loop's body
into a prefix, which runs as written at every iteration (the routing: `where`, `nonzero`,
`if n == 0: continue`, on real values), and a straight-line suffix (assignments and calls, no control
flow) whose names are dead outside it, and marks each statement of the suffix as a checkpoint. Under
an `OpRecorder`, a `RoutedLoop`:

- records the suffix in full and keeps a trace of its ATen calls, from the first checkpoint after
  which the suffix reads no values (`nonzero`, `.item()`, `tolist`) and masks nothing recorded before;
- keys each recording by the state the suffix reads: its free names and the module's globals, tensors
  by everything the recorder knows of them (kind, dtype, precision, aliasing, the op that wrote
  them, their mask tracking, how many input rows they view) apart from their sizes, which form a
  vector; numbers by value, except the index variables (names the suffix uses only as subscripts,
  `w[e]`, whose value picks rows and nothing else);
- within one key, takes the recorded ops' costs and operand sizes as affine in the size vector once
  three recordings at three distinct sizes on one line agree exactly (two fix the line, the third
  checks it: any cost polynomial of degree two or less in the routed count is then exactly affine;
  a fitted size or byte count that is not an integer refuses), or an exact size class once two
  recordings at those sizes agree;
- then, for an iteration of a known key and size, appends the predicted ops without running the
  suffix, and replays only what depends on the iteration's values: the real ops (on the real
  routing tensors), the views of inputs (selected by the index variables), and, for every op that
  reads rows of an input or writes a tensor from outside the suffix, the recorder's bookkeeping
  with this iteration's tensors. Compulsory bytes (which rows of which input) and in-place
  accumulation therefore come out as a full recording makes them.

A problem's analysis runs the reference once per workload and input draw; its `RoutedTemplates` carries what
each loop learned from run to run (keys, recordings, the checkpoint templates start at), so a later run records
in full only the counts beyond those recorded before. A key's recordings may lie on several lines of sizes (an
output or buffer sized by the workload's token count moves the routed count along a parallel line in the next
workload; the rows an input view holds are part of the key): each line is checked, and predicts only between its
own recorded points, as above.

Anything else records the iteration in full: a suffix that calls into a composite, reads values,
gathers with indices it cannot see, scales a mask, touches a tensor it cannot name, indexes a
non-tensor with an index variable or a subscript whose other integers collide with that variable's
value, or a key whose recordings disagree. Loops under autograd, inside a `sol/loops.py` probe or
inside another routed loop's template run as written.
"""

from __future__ import annotations

import ast
import builtins
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from solbench.sol.costs import precision_of
from solbench.sol.loops import (
    _CONSTANT_TYPES,
    OWN_PREFIX,
    _active_recorder,
    _defined_in,
    _Unsupported,
    _Walk,
    insert_import,
)

ROUTED_ALIAS = "_solbench_routed"
ROUTED_PREFIX = "_solbench_routed_"
_FORBIDDEN_IN_SUFFIX = (
    ast.IfExp,  # `a if n > 8 else b`: a branch on the routed count, which a template would not see
    ast.BoolOp,
    ast.Compare,
    ast.Lambda,
    ast.NamedExpr,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Starred,
)
_INTROSPECTION = {"locals", "vars", "eval", "exec", "globals"}


# --- the source transformation ------------------------------------------------------------------------------


def with_routed_loops(source: str) -> str | None:
    """The source with every loop whose body ends in straight-line code iterating through a `RoutedLoop`, or None
    when no loop qualifies (or the source does not parse). Runs after `sol/loops.py`'s rewriting: a loop that
    iterates through a `Loop` is left as it is."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    rewriter = _RoutedRewriter()
    tree = rewriter.visit(tree)
    if not rewriter.count:
        return None
    insert_import(tree, __name__, ROUTED_ALIAS)
    return ast.unparse(ast.fix_missing_locations(tree))


class _RoutedRewriter(ast.NodeTransformer):
    def __init__(self):
        self.count = 0
        self.scopes: list[ast.AST] = []

    def _in_scope(self, node: ast.AST) -> ast.AST:
        self.scopes.append(node)
        try:
            self.generic_visit(node)
        finally:
            self.scopes.pop()
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._in_scope(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._in_scope(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return self._in_scope(node)

    def visit_For(self, node: ast.For):
        self.generic_visit(node)  # a loop inside may qualify too
        if isinstance(node.iter, ast.Name) and node.iter.id.startswith(OWN_PREFIX):
            return node  # iterates through a loop shortcut already
        rewritten = routed_loop(node, self.scopes[-1], self.count) if self.scopes else None
        if rewritten is None:
            return node
        self.count += 1
        return rewritten


@dataclass(frozen=True)
class _Checkpoint:
    position: int
    """Index of the body statement the checkpoint stands before."""
    free: tuple[str, ...]
    """Names the statements from here on read before they assign them."""
    index_variables: tuple[str, ...]
    """Free names read only as subscript elements from here on."""


def routed_loop(node: ast.For, scope: ast.AST, number: int) -> list[ast.stmt] | None:
    """`node` rewritten to iterate through a `RoutedLoop` (the statements that replace it), or None when its body
    has no straight-line suffix whose names are dead outside it. `scope`: the function the loop is in."""
    if node.orelse or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _INTROSPECTION
        for n in ast.walk(scope)
    ):
        return None
    body = node.body
    start = len(body)
    while start > 0 and _straight_line(body[start - 1]):
        start -= 1
    declared = {name for n in ast.walk(scope) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    checkpoints = []
    for position in range(start, len(body)):
        checkpoint = _checkpoint(body, position, scope, declared)
        if checkpoint is not None:
            checkpoints.append(checkpoint)
    if not checkpoints:
        return None
    loop_name = f"{ROUTED_PREFIX}{number}"
    variables = {name for c in checkpoints for name in c.index_variables}
    suffix = [_IndexThroughLoop(variables, loop_name).visit(s) for s in body[start:]]
    new_body = list(body[:start])
    admitted = {c.position for c in checkpoints}
    for position, statement in enumerate(suffix, start=start):
        if position in admitted:
            new_body.append(_checkpoint_statement(loop_name, position))
        new_body.append(statement)
    new_body.append(ast.Expr(_call(loop_name, "end", [])))
    node.body = new_body
    specs = ast.Tuple(
        elts=[
            ast.Tuple(
                elts=[
                    ast.Constant(c.position),
                    ast.Tuple(elts=[ast.Constant(n) for n in c.free], ctx=ast.Load()),
                    ast.Tuple(elts=[ast.Constant(n) for n in c.index_variables], ctx=ast.Load()),
                ],
                ctx=ast.Load(),
            )
            for c in checkpoints
        ],
        ctx=ast.Load(),
    )
    make = ast.Assign(
        targets=[ast.Name(id=loop_name, ctx=ast.Store())],
        value=ast.Call(
            func=ast.Attribute(value=ast.Name(id=ROUTED_ALIAS, ctx=ast.Load()), attr="RoutedLoop", ctx=ast.Load()),
            args=[node.iter, specs, ast.Constant(number)],
            keywords=[],
        ),
    )
    node.iter = ast.Name(id=loop_name, ctx=ast.Load())
    return [ast.copy_location(make, node), node]


def _straight_line(statement: ast.stmt) -> bool:
    """An assignment to plain names or a call, with nothing inside that branches, loops or binds names."""
    if isinstance(statement, ast.Assign):
        if not all(_plain_target(t) for t in statement.targets):
            return False
    elif not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    return not any(
        isinstance(n, _FORBIDDEN_IN_SUFFIX) or (isinstance(n, ast.Name) and n.id.startswith(OWN_PREFIX))
        for n in ast.walk(statement)
    )


def _plain_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts)


def _checkpoint(body: list[ast.stmt], position: int, scope: ast.AST, declared: set[str]) -> _Checkpoint | None:
    """The checkpoint before `body[position]`, or None where a name the statements from there on assign is read
    elsewhere (it would keep a template's value after a replay) or is read there before it is assigned."""
    suffix = body[position:]
    free: list[str] = []
    stored: set[str] = set()
    for statement in suffix:
        value = statement.value if isinstance(statement, (ast.Assign, ast.Expr)) else statement
        for n in ast.walk(value):
            if isinstance(n, ast.Name) and n.id not in stored and n.id not in free:
                free.append(n.id)
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                names = [target] if isinstance(target, ast.Name) else target.elts  # type: ignore[attr-defined]
                stored.update(n.id for n in names)
    if stored & set(free) or stored & declared:
        return None
    inside = {id(n) for statement in suffix for n in ast.walk(statement)}
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and n.id in stored and id(n) not in inside and not isinstance(n.ctx, ast.Store):
            return None
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id in stored:
            return None
    index_variables = tuple(name for name in free if _only_subscripted(name, suffix))
    return _Checkpoint(position, tuple(free), index_variables)


def _only_subscripted(name: str, suffix: list[ast.stmt]) -> bool:
    """Every read of `name` is a whole element of a subscript read (`x[e]`, `x[i, e, None]`)."""
    allowed: set[int] = set()
    for statement in suffix:
        for n in ast.walk(statement):
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
                for element in n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]:
                    if isinstance(element, ast.Name) and element.id == name:
                        allowed.add(id(element))
    uses = [n for s in suffix for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name]
    return bool(uses) and all(id(n) in allowed for n in uses)


class _IndexThroughLoop(ast.NodeTransformer):
    """`x[..., e, ...]` with `e` a candidate index variable becomes `loop.index(x, (..., e, ...), positions)`: the
    loop then knows which `select` takes the variable's value while it records a template."""

    def __init__(self, variables: set[str], loop_name: str):
        self.variables, self.loop_name = variables, loop_name

    def visit_Subscript(self, node: ast.Subscript):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        index = node.slice
        elements = index.elts if isinstance(index, ast.Tuple) else [index]
        names = [e.id if isinstance(e, ast.Name) and e.id in self.variables else None for e in elements]
        if not any(names):
            return node
        named = ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())
        key = (
            ast.Tuple(elts=[_as_value(e) for e in elements], ctx=ast.Load()) if isinstance(index, ast.Tuple) else index
        )
        call = _call(
            self.loop_name, "index", [node.value, _as_value(key), ast.Constant(isinstance(index, ast.Tuple)), named]
        )
        return ast.copy_location(call, node)


def _as_value(element: ast.expr) -> ast.expr:
    """A subscript element as an expression outside the brackets: `a:b` is only syntax there, `slice(a, b)` is
    its value (taken from builtins through this module's alias, whatever the reference calls `slice`)."""
    if not isinstance(element, ast.Slice):
        return element
    parts = [part if part is not None else ast.Constant(None) for part in (element.lower, element.upper, element.step)]
    builtins_module = ast.Attribute(value=ast.Name(id=ROUTED_ALIAS, ctx=ast.Load()), attr="builtins", ctx=ast.Load())
    return ast.Call(func=ast.Attribute(value=builtins_module, attr="slice", ctx=ast.Load()), args=parts, keywords=[])


def _call(loop_name: str, method: str, args: list) -> ast.Call:
    return ast.Call(
        func=ast.Attribute(value=ast.Name(id=loop_name, ctx=ast.Load()), attr=method, ctx=ast.Load()),
        args=args,
        keywords=[],
    )


def _checkpoint_statement(loop_name: str, position: int) -> ast.If:
    return ast.If(test=_call(loop_name, "at", [ast.Constant(position)]), body=[ast.Continue()], orelse=[])


# --- the run-time side ----------------------------------------------------------------------------------------


class RoutedTemplates:
    """What the routed loops of one reference module learned while one problem is analysed: each workload and
    input draw runs the reference anew, and so makes its `RoutedLoop`s anew, which would otherwise learn their
    templates again (a handful of iterations recorded in full per run). Made by the analysis for one module and the
    inputs it draws for it, and handed to each run's recorder; kept by nothing longer (its templates hold that
    run's stand-in tensors and the objects their keys name by identity)."""

    def __init__(self):
        self._loops: dict[tuple, _LoopTemplates] = {}

    def loop(self, identity: tuple) -> _LoopTemplates:
        """The templates of the loop `identity` (its code location, number and the values mode's settings)."""
        found = self._loops.get(identity)
        if found is None:
            found = self._loops[identity] = _LoopTemplates()
        return found


@dataclass
class _LoopTemplates:
    start: int | None = None
    """The checkpoint templates start at, once the first recorded iteration has shown one (-1: none does)."""
    keys: dict[Any, _Lines] = field(default_factory=dict)
    """State structure -> its recordings."""


class RoutedLoop:
    """Iterates like the plain loop; under a recorder that allows it, costs the body's suffix from templates (see
    the module docstring). Without one it is the plain loop, and its checkpoints and subscripts do nothing."""

    def __init__(self, values, checkpoints: tuple, number: int = 0):
        self._values = values
        self._checkpoints = {position: (free, variables) for position, free, variables in checkpoints}
        code = sys._getframe(1).f_code
        self._identity = (code.co_filename, code.co_firstlineno, number)
        self._recorder = None
        self._templates = _LoopTemplates()
        self._recording: _Recording | None = None

    def __iter__(self):
        import torch

        recorder = _active_recorder()
        if recorder is None or torch.is_grad_enabled():
            yield from self._values
            return
        self._recorder = recorder
        store = recorder.routed_templates
        if store is not None and recorder.loop_templates:
            self._templates = store.loop((*self._identity, _mode_settings(recorder)))
        try:
            for value in self._values:
                self._stop_recording()  # an iteration that left through `continue` before its suffix ended
                yield value
        finally:
            self._stop_recording()
            self._recorder = None

    def index(self, value, key, is_tuple: bool, names: tuple):
        """`value[key]`; while a template is recorded, the `select` that takes an index variable's value is marked."""
        recording = self._recording
        if recording is None:
            return value[key]
        import torch

        elements = key if is_tuple else (key,)
        marked = {}
        for element, name in zip(elements, names):
            if name is not None and name in recording.index_variables and type(element) is int:
                marked[element] = name
        if marked:
            others = [e for e, n in zip(elements, names) if type(e) is int and (n is None or n not in marked.values())]
            if not isinstance(value, torch.Tensor) or len(marked) != sum(1 for n in names if n in marked.values()):
                recording.refused = "an index variable subscripts a non-tensor, or two of them share a value"
            elif any(e in marked for e in others):
                recording.refused = "a subscript's integer equals an index variable's value"
        recorder = self._recorder
        assert recorder is not None  # set while a recording is open
        recorder.trace_index = marked or None
        try:
            return value[key]
        finally:
            recorder.trace_index = None

    def at(self, position: int) -> bool:
        """Before suffix statement `position`: True when the rest of the suffix was costed from a template (the
        iteration then continues with the next one), False when it runs (and may be recorded as a template)."""
        recorder = self._recorder
        start = self._templates.start
        if recorder is None or (start is not None and position != start):
            return False
        if self._recording is not None:
            self._recording.marks.append((position, len(self._recording.trace)))
            return False
        if recorder.trace is not None or recorder._probing or not recorder.loop_templates:
            return False  # inside another loop's template or probe: this loop runs as written
        frame = sys._getframe(1)
        free, variables = self._checkpoints[position]
        import torch

        with torch._C.DisableTorchFunction():  # a torch-function mode would see every tensor attribute the walk reads
            state = _state(frame, free, variables, recorder)
        if start is not None and state is not None:
            lines = self._templates.keys.get(state.structure)
            if lines is not None:
                ops = lines.ops_for(state.sizes)
                if ops is not None:
                    lines.replay(recorder, state, ops)
                    return True
        self._recording = _Recording(position, state, variables, recorder)
        return False

    def end(self) -> None:
        """After the suffix's last statement: a recording in progress becomes a template candidate."""
        recording = self._recording
        if recording is None:
            return
        self._stop_recording()
        recorder = self._recorder
        assert recorder is not None
        templates = self._templates
        if templates.start is None:
            templates.start = recording.first_pure_checkpoint(recorder)
            if templates.start is None:
                templates.start = -1  # no checkpoint yields a template: every iteration runs as written
                return
            if templates.start != recording.position:
                return  # the state at the chosen checkpoint was not taken: the next iteration records from there
        state = recording.state
        point = recording.point(recorder)
        if point is None or state is None:
            return
        lines = templates.keys.get(state.structure)
        if lines is None:
            templates.keys[state.structure] = _Lines(point, state.named)
        else:
            lines.add(point)

    def _stop_recording(self) -> None:
        recording = self._recording
        if recording is not None and self._recorder is not None:
            recording.close(self._recorder)
        self._recording = None


def _mode_settings(recorder) -> tuple:
    """What decides, besides the state, which results the values mode computes for real."""
    values = recorder._values
    return (type(values), values.shape_only, values.float_factory_limit, values.slices is not None)


# --- the state a suffix reads ----------------------------------------------------------------------------------


@dataclass
class _State:
    structure: Any
    """Everything the suffix's recording depends on but the sizes."""
    sizes: tuple[int, ...]
    tensors: list
    """The tensors the suffix can reach, in walk order (a template's free slots)."""
    variables: dict[str, int]
    """The index variables' values."""
    named: list
    """The objects `structure` names by identity (modules, functions, classes): whoever keeps the structure as a key
    keeps these alive, so that no other object takes one's identity while it does."""


def _state(frame, free: tuple, variables: tuple, recorder) -> _State | None:
    """The state the suffix reads, or None where it holds something the walk cannot see into."""
    module_globals = frame.f_globals
    local_values = frame.f_locals
    walk = _SizeWalk(recorder, module_globals.get("__name__"), frame.f_code.co_filename)
    index_values = {}
    try:
        items = []
        for name in free:
            if name in local_values:
                value = local_values[name]
                if name in variables and type(value) is int:
                    index_values[name] = value
                    items.append((name, "index variable"))
                else:
                    items.append((name, walk.value(value)))
            elif name not in module_globals and not hasattr(builtins, name):
                return None  # unbound: the suffix would fail, and the plain run reports it
        for name, value in sorted(module_globals.items()):
            if name.startswith(("__", OWN_PREFIX)):
                continue
            if isinstance(value, _CONSTANT_TYPES) and not _defined_in(value, module_globals):
                continue
            items.append((name, walk.value(value)))
    except _Unsupported:
        return None
    items.append(("torch's global settings", _torch_settings()))
    return _State(tuple(items), tuple(walk.sizes), walk.tensors, index_values, walk.named)


def _torch_settings() -> tuple:
    """What torch reads from process-wide settings rather than from the suffix's state: a template learned under
    one default dtype (`torch.ones(n)`), device or autocast state must not be replayed under another (the templates
    outlive one execution of the loop: sol/routed.py's `RoutedTemplates`)."""
    import torch

    return (
        torch.get_default_dtype(),
        torch.get_default_device(),
        torch.is_autocast_enabled("cpu"),
        torch.get_autocast_dtype("cpu"),
        torch.is_autocast_enabled("cuda"),
        torch.get_autocast_dtype("cuda"),
        torch.get_float32_matmul_precision(),
        torch.are_deterministic_algorithms_enabled(),
    )


class _SizeWalk(_Walk):
    """The loop shortcut's state walk, with tensors described apart from their sizes (collected in `sizes`) and
    their input rows by count (which rows is the replay's business)."""

    def __init__(self, recorder, module: str | None, file: str | None):
        import torch
        from torch._subclasses.fake_tensor import is_fake

        super().__init__(recorder, set(), 0, module, file)
        self.sizes: list[int] = []
        self.tensors: list = []
        self.roots: dict[int, int] = {}
        self.named: list = []
        self._is_fake = is_fake
        self._tensor_type = torch.Tensor
        values = recorder._values
        self._is_stale = values.is_stale if values is not None else None

    def value(self, value):
        if isinstance(value, self._tensor_type):  # most of a suffix's state: straight to `tensor`
            self.budget -= 1
            if self.budget < 0:
                raise _Unsupported
            return self.tensor(value)
        if isinstance(value, _CONSTANT_TYPES):
            self.named.append(value)  # the walk describes these by identity
        return super().value(value)

    def tensor(self, tensor) -> tuple:
        recorder = self.recorder
        self.tensors.append(tensor)
        shape, stride = tensor.shape, tensor.stride()
        sizes = self.sizes
        sizes += shape
        sizes += stride
        roots = self.roots
        masks = recorder.masks
        key = id(tensor)
        # the recorder's `root_of`, `origin_of`, `rows_of` and `producer_of`, inlined: a walk describes each tensor
        # of the suffix's state at every iteration of the loop
        root = recorder._base.get(key, key)
        origin = recorder._origin.get(key)
        rows = recorder._rows.get(key)
        producers = recorder._producer
        is_stale = self._is_stale
        dtype = tensor.dtype
        return (
            "meta" if tensor.is_meta else "fake" if self._is_fake(tensor) else "real",
            dtype,
            tuple([size == 0 for size in shape]) if 0 in shape else len(shape),
            tuple([s == 0 for s in stride]) if 0 in stride else len(stride),
            roots.setdefault(root, len(roots)),
            origin if origin is not None else precision_of(dtype),
            None if rows is None else (rows.root, len(rows.rows), rows.leading, rows.rows.step),
            producers.get(root, producers.get(key)),
            masks.nonzero.get(key),
            masks.kept.get(key),
            key in masks.producer,
            is_stale is not None and is_stale(tensor),
        )


# --- recording a template -------------------------------------------------------------------------------------


@dataclass
class _Recording:
    """One iteration's suffix as it is recorded in full, with the trace of its ATen calls."""

    position: int
    state: _State | None
    index_variables: tuple
    recorder: Any
    trace: list = field(default_factory=list)
    marks: list = field(default_factory=list)
    """(checkpoint, trace length) at each later checkpoint passed."""
    refused: str | None = None
    start: int = 0
    counters: tuple = ()

    def __post_init__(self):
        recorder = self.recorder
        self.marks = [(self.position, 0)]
        self.start = len(recorder.recording.ops)
        self.counters = _counters(recorder)
        recorder.trace = self.trace

    def close(self, recorder) -> None:
        if recorder.trace is self.trace:
            recorder.trace = None
            recorder.trace_index = None
        self.recorder = None

    def first_pure_checkpoint(self, recorder) -> int | None:
        """The earliest checkpoint after which the recorded calls read no values, nor could be replayed otherwise."""
        for position, offset in self.marks:
            if _replayable(self.trace[offset:]):
                return position
        return None

    def point(self, recorder) -> _Point | None:
        """The recording as a template point, or None where it cannot be replayed."""
        if self.refused or self.state is None or _counters(recorder) != self.counters:
            return None
        calls = self.trace
        ops = recorder.recording.ops[self.start :]
        if not _replayable(calls) or sum(1 for c in calls if c.info.recorded) != len(ops):
            return None  # a value read, a composite, or ops appended without a call (a loop shortcut inside)
        return _template(calls, ops, self.state, recorder)


def _counters(recorder) -> tuple:
    """What a template may not change: mask scalings, structural masks, gathers of unknown rows, values read."""
    recording = recorder.recording
    return (
        recorder.mask_scalings,
        len(recorder.masks.nonzero),
        len(recorder.masks.kept),
        tuple(sorted(recording.gathered_bytes.items())),
        recorder.python_value_reads,
    )


def _replayable(calls: list) -> bool:
    from solbench.sol.recorder import _VALUE_READS

    return not any(c.unrecordable or c.info.name in _VALUE_READS for c in calls)


@dataclass(frozen=True)
class _Step:
    """One call of a template that its replay repeats: computed (real results, views with a real or input
    source) and/or bookkept (rows read, tensors from outside the suffix written)."""

    func: Any
    info: Any
    args: tuple
    kwargs: tuple
    outputs: tuple
    """Per output: the slot it fills, or the argument slot it is (an in-place result)."""
    compute: bool
    reads: bool
    """Some argument views an input: the rows it reads are noted again."""
    carries: bool
    """Some output is computed, or is a tensor from before the call (written in place): its precision, rows and
    aliasing are carried again. A fresh result that is not computed stands in with what its recording gave it."""


@dataclass
class _Point:
    sizes: tuple[int, ...]
    numbers: tuple
    """Every op's cost figures and operand sizes, flat, in order."""
    shape: tuple
    """What must match between points: the calls' slots and constants, the ops' names, precisions and ranks."""
    ops: list
    steps: list
    standins: dict
    """Slot -> the tensor this recording made there (stands in, in a replay, for a result nobody needs)."""
    adopted: tuple
    """(stand-in, the precision the recorder gave it) for each stand-in whose precision a replay's bookkeeping
    reads: a later run's recorder, which never saw the stand-in, takes it as this run's did."""
    free: int
    """How many tensors the suffix's state holds (its free slots)."""
    dims: tuple
    """Per op, every size of its call's tensor arguments and results, flat: a cost is a sum of products of these
    (FLOPs, bytes), so along a line it is a polynomial in the position of degree at most the count of those that
    vary (`_Family` checks that many points plus one before it predicts)."""


def _template(calls: list, ops: list, state: _State, recorder) -> _Point | None:
    import torch

    slots: dict[int, tuple] = {}
    for position, tensor in enumerate(state.tensors):
        slots.setdefault(id(tensor), ("free", position))
    actual = set()  # slots whose replay holds this iteration's tensor (free ones, computed ones)
    steps, standins, shape = [], {}, []
    for number, call in enumerate(calls):
        try:
            args = tuple(_slot(v, slots, call.variables, p) for p, v in enumerate(call.args))
            kwargs = tuple((k, _slot(v, slots, None, -1)) for k, v in call.kwargs.items())
        except _Unslotted:
            return None
        outputs = _flat_outputs(call.result)
        argument_tensors = [s for s in _slots_in(args) + _slots_in(tuple(v for _, v in kwargs))]
        any_actual = any(s[0] == "free" or s in actual for s in argument_tensors)
        real = any(isinstance(o, torch.Tensor) and not o.is_meta for o in outputs)
        compute = real or (call.info.is_view and any_actual)
        if compute and not all(s[0] == "free" or s in actual for s in argument_tensors):
            return None  # a real result from a tensor the replay does not compute: cannot happen under the mode
        written = (
            call.info.is_mutable
            and argument_tensors
            and (argument_tensors[0][0] == "free" or argument_tensors[0] in actual)
        )
        out_slots = []
        for piece, out in enumerate(outputs):
            if not isinstance(out, torch.Tensor):
                out_slots.append(("value", out))
                continue
            existing = slots.get(id(out))
            if existing is None:
                existing = slots[id(out)] = ("local", number, piece)
                standins[existing] = out
            out_slots.append(existing)
            if compute:
                actual.add(existing)
        bookkeep = compute or call.tracked or written or call.info.grouped
        if bookkeep:
            fresh = all(slot[0] == "local" and slot[1] == number for slot in out_slots)
            reads = (call.tracked or call.info.grouped) and not call.info.is_view  # a view reads nothing itself
            carries = compute or not fresh
            steps.append(_Step(call.func, call.info, args, kwargs, tuple(out_slots), compute, reads, carries))
        shape.append((call.func, args if bookkeep else call.info.name, kwargs if bookkeep else (), bookkeep))
    numbers, op_shape = _op_numbers(ops)
    adopted = _adopted(steps, standins, actual, recorder)
    dims = tuple(_call_dims(call) for call in calls if call.info.recorded)
    return _Point(
        state.sizes, numbers, (tuple(shape), op_shape), list(ops), steps, standins, adopted, len(state.tensors), dims
    )


def _call_dims(call) -> tuple[int, ...]:
    """Every size of a call's tensor arguments (in lists too) and results, flat and in order."""
    import torch

    dims: list[int] = []
    for value in (*call.args, *call.kwargs.values(), *_flat_outputs(call.result)):
        for tensor in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(tensor, torch.Tensor):
                dims.extend(tensor.shape)
    return tuple(dims)


def _adopted(steps: list, standins: dict, actual: set, recorder) -> tuple:
    """The stand-ins a replay hands to the recorder's precision carrying (the tensors of a step that carries), with
    the precision each has now, at the end of its recording: what the replays of this run find."""
    used = {}
    for step in steps:
        if step.carries:
            for slot in _slots_in(step.args) + _slots_in(tuple(v for _, v in step.kwargs)) + list(step.outputs):
                if slot[0] == "local" and slot not in actual:
                    used[slot] = standins[slot]
    return tuple((tensor, recorder.origin_of(tensor)) for tensor in used.values())


class _Unslotted(Exception):
    """A tensor argument that is neither reachable from the suffix's state nor made inside it."""


def _slot(value, slots: dict, variables: dict | None, position: int):
    import torch

    if isinstance(value, torch.Tensor):
        found = slots.get(id(value))
        if found is None:
            raise _Unslotted
        return found
    if isinstance(value, (list, tuple)):
        return ("list", type(value), tuple(_slot(v, slots, None, -1) for v in value))
    if variables is not None and position in variables:
        return ("variable", variables[position])
    if isinstance(value, (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout)):
        return ("constant", type(value), value)
    if isinstance(value, torch.memory_format):
        return ("constant", type(value), value)
    raise _Unslotted


def _slots_in(values: tuple) -> list:
    found = []
    for value in values:
        if value[0] in ("free", "local"):
            found.append(value)
        elif value[0] == "list":
            found.extend(_slots_in(value[2]))
    return found


def _flat_outputs(result) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _op_numbers(ops: list) -> tuple[tuple, tuple]:
    numbers: list = []
    shape = []
    for op in ops:
        cost = op.cost
        matrix, vector = sorted(cost.matrix_flops), sorted(cost.vector_flops)
        numbers.extend(cost.matrix_flops[p] for p in matrix)
        numbers.extend(cost.vector_flops[p] for p in vector)
        numbers.extend((cost.special_ops, cost.bytes_read, cost.bytes_written))
        for operand, _dtype in op.operands:
            numbers.extend(operand)
        shape.append((op.name, op.covered, tuple(matrix), tuple(vector), tuple((len(s), d) for s, d in op.operands)))
    return tuple(numbers), tuple(shape)


# --- the templates of one key: sizes on lines -------------------------------------------------------------------


class _Lines:
    """The recordings of one key, on one or more lines of sizes (a `_Family` each): a run varies the routed count
    along one line, and the next workload may shift sizes that stay put within a run (an output sized by its token
    count), which moves the count along another, parallel line. A recording joins every line it lies on; one on none
    starts a line (or fixes the newest line's direction, where that has one point yet). Any disagreement breaks the
    key: all its recordings run in full from then on."""

    def __init__(self, first: _Point, named: list):
        self.template = first
        """The recording a replay repeats the steps of (every recording of the key has the same steps)."""
        self.named = named
        """The objects the key names by identity, kept alive with it (see `_State.named`)."""
        self.families = [_Family(first)]
        self.broken = False
        self._replay = _Replay(first)
        self._predicted: dict[tuple, list | None] = {}
        """Sizes -> the ops `ops_for` gave. An answer stays right as recordings join (the points a prediction comes
        from never change); an unknown (None) may change, and is dropped."""

    def add(self, point: _Point) -> None:
        if self.broken:
            return
        if point.shape != self.template.shape:
            self.broken = True
            return
        homes = [family for family in self.families if family.holds(point.sizes)]
        if not homes:
            newest = self.families[-1]
            homes = [newest] if newest.second is None else []
        for family in homes:
            family.add(point)
            if family.broken:
                self.broken = True
                return
        if not homes:
            self.families.append(_Family(point))
        self._predicted = {sizes: ops for sizes, ops in self._predicted.items() if ops is not None}

    def ops_for(self, sizes: tuple) -> list | None:
        """The ops a full recording at `sizes` would append, or None where they cannot be told exactly."""
        if self.broken:
            return None
        predicted = self._predicted
        if sizes in predicted:
            return predicted[sizes]
        ops = None
        for family in self.families:
            ops = family.ops_for(sizes)
            if ops is not None:
                break
        predicted[sizes] = ops
        return ops

    def replay(self, recorder, state: _State, ops: list) -> None:
        """Append `ops`, and redo, with this iteration's tensors, what in the suffix depends on them."""
        self._replay.run(recorder, state, ops)


class _Replay:
    """A template's steps with every slot numbered: a replay fills one list (this iteration's tensors first, then
    the stand-ins and constants as the recording left them) and reads each argument by its number, rather than
    working out every slot by its kind at every step of every iteration."""

    def __init__(self, template: _Point):
        self.adopted = template.adopted
        self.free = template.free
        self.initial: list = [None] * template.free
        self.variables: list[tuple[str, int]] = []
        """(index variable, its number): filled in with the iteration's value."""
        self._numbers: dict[tuple, int] = {}
        self.steps = [self._compile(step, template.standins) for step in template.steps]
        del self._numbers

    def _number(self, slot: tuple, standins: dict, builds: list) -> int:
        kind = slot[0]
        if kind == "free":
            return slot[1]
        if kind in ("local", "variable"):
            number = self._numbers.get(slot)
            if number is None:
                number = self._numbers[slot] = len(self.initial)
                self.initial.append(standins[slot] if kind == "local" else None)
                if kind == "variable":
                    self.variables.append((slot[1], number))
            return number
        number = len(self.initial)
        if kind == "list":  # built afresh at each step that takes it, from its members' numbers
            members = tuple(self._number(s, standins, builds) for s in slot[2])
            self.initial.append(None)
            builds.append((number, slot[1], members))
        else:  # a constant, numbered at each use: equal constants need not be alike (0.0 and -0.0)
            self.initial.append(slot[2])
        return number

    def _compile(self, step: _Step, standins: dict) -> tuple:
        builds: list = []
        args = tuple(self._number(slot, standins, builds) for slot in step.args)
        kwargs = tuple((name, self._number(slot, standins, builds)) for name, slot in step.kwargs)
        tensors = [s for s in _slots_in(step.args) + _slots_in(tuple(v for _, v in step.kwargs))]
        views_of = tuple(self._number(s, standins, builds) for s in tensors) if step.info.is_view else None
        if step.compute:
            outputs = tuple(self._number(s, standins, []) if s[0] == "local" else None for s in step.outputs)
        else:
            outputs = tuple(self._number(s, standins, []) for s in step.outputs if s[0] in ("free", "local"))
        return (
            step.func,
            step.info,
            tuple(builds),
            args,
            kwargs,
            step.compute,
            views_of,
            outputs,
            step.reads,
            step.carries,
        )

    def run(self, recorder, state: _State, ops: list) -> None:
        import torch

        for tensor, origin in self.adopted:
            recorder.adopt(tensor, origin)
        slots = self.initial.copy()
        slots[: self.free] = state.tensors
        for name, number in self.variables:
            slots[number] = state.variables[name]
        values = recorder._values
        bookkeep = recorder.bookkeep
        tensor_type = torch.Tensor
        # as inside the recorder's own dispatch: no mode on the stack (the values mode is entered where it is needed),
        # and no torch-function mode either, which would see every tensor method the bookkeeping calls
        with _no_dispatch_modes(), torch._C.DisableTorchFunction():
            for (
                func,
                info,
                builds,
                arg_numbers,
                kwarg_numbers,
                compute,
                views_of,
                outputs,
                reads,
                carries,
            ) in self.steps:
                for number, kind, members in builds:
                    slots[number] = kind([slots[m] for m in members])
                args = tuple([slots[n] for n in arg_numbers])
                kwargs = {name: slots[n] for name, n in kwarg_numbers} if kwarg_numbers else {}
                if compute:
                    if views_of is not None and all(slots[n].is_meta for n in views_of):
                        result = func(*args, **kwargs)  # what the values mode does for a view of a meta tensor
                    else:
                        result = values.compute(func, (), args, kwargs)
                    results = list(result) if isinstance(result, (tuple, list)) else [result]
                    for number, out in zip(outputs, results):
                        if number is not None:
                            slots[number] = out
                    written = [o for o in results if isinstance(o, tensor_type)]
                else:
                    written = [slots[n] for n in outputs]
                bookkeep(info, args, kwargs, written, reads=reads, carries=carries)
        recorder.recording.ops.extend(ops)


@contextmanager
def _no_dispatch_modes():
    """No dispatch mode on the stack while the block runs. Where the recorder is the only one (a routed loop's replay
    runs inside the reference, under the recorder alone), popping that one is all `_disable_current_modes` would do,
    at a third of its cost (it imports and inspects every kind of mode first): a replay enters this per iteration."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    if torch._C._len_torch_dispatch_stack() != 1 or torch._ops._len_torch_dispatch_stack_pre_dispatch() != 0:
        with _disable_current_modes():
            yield
        return
    mode = torch._C._pop_torch_dispatch_stack(None)
    try:
        yield
    finally:
        torch._C._push_on_torch_dispatch_stack(mode)


class _Family:
    """The recordings of one key on one line of sizes. Replays the sizes two recordings agree on exactly, and, once
    three recordings at three distinct points of the line agree with it, any size on it between the outermost points
    recorded: a size beyond them is recorded in full and widens the span. A branch on the routed count that
    no rule of the suffix shows (a helper function's `if h.shape[0] > 8`, an ATen op that picks its decomposition by
    size) then lies between two recordings that disagree, which breaks the family, instead of beyond the points
    that fixed the line, where a prediction would have carried one side's ops to the other."""

    def __init__(self, first: _Point):
        self.first = first
        self.second: _Point | None = None
        self.confirmed: set[tuple] = set()
        self.line_checked = False
        self.broken = False
        self._needed = 3
        """Distinct points on the line that must agree before it predicts: one more than the highest degree any
        op's cost can have along it (`_Point.dims`), and at least three (two fix the line, one checks it)."""
        self._on_line: set[tuple] = set()
        self._span = (Fraction(0), Fraction(1))
        """The least and greatest position on the line (first at 0, second at 1) of a recording that agreed."""

    def holds(self, sizes: tuple) -> bool:
        """`sizes` is one of the recorded points, or on the line they fix."""
        if sizes == self.first.sizes:
            return True
        if self.second is None:
            return False
        return sizes == self.second.sizes or self._position(sizes) is not None

    def add(self, point: _Point) -> None:
        if self.broken:
            return
        if point.shape != self.first.shape:
            self.broken = True
            return
        if point.sizes == self.first.sizes:
            self._check(point, point.numbers == self.first.numbers)
            return
        if self.second is None:
            self.second = point
            self._needed = max(3, 1 + _highest_degree(self.first.dims, point.dims))
            self._on_line = {self.first.sizes, point.sizes}
            return
        if point.sizes == self.second.sizes:
            self._check(point, point.numbers == self.second.numbers)
            return
        t = self._position(point.sizes)
        if t is None:
            return  # off the line: another line of the key takes it
        predicted = _predict(self.first.numbers, self.second.numbers, t)
        if predicted != point.numbers:
            self.broken = True
            return
        self.confirmed.add(point.sizes)
        self._on_line.add(point.sizes)
        self.line_checked = len(self._on_line) >= self._needed
        self._span = (min(self._span[0], t), max(self._span[1], t))

    def _check(self, point: _Point, agrees: bool) -> None:
        if agrees:
            self.confirmed.add(point.sizes)
        else:
            self.broken = True

    def _position(self, sizes: tuple) -> Fraction | None:
        """t with sizes = first + t * (second - first), or None."""
        assert self.second is not None
        first, second = self.first.sizes, self.second.sizes
        if len(sizes) != len(first):
            return None
        t = None
        for a, b, s in zip(first, second, sizes):
            if a == b:
                if s != a:
                    return None
                continue
            here = Fraction(s - a, b - a)
            if t is None:
                t = here
            elif here != t:
                return None
        return t

    def ops_for(self, sizes: tuple) -> list | None:
        """The ops a full recording at `sizes` would append, or None where they cannot be told exactly."""
        if self.broken:
            return None
        if sizes == self.first.sizes and (sizes in self.confirmed or self.line_checked):
            return self.first.ops
        if self.second is not None and sizes == self.second.sizes and (sizes in self.confirmed or self.line_checked):
            return self.second.ops
        if self.line_checked and self.second is not None:
            t = self._position(sizes)
            if t is not None and self._span[0] <= t <= self._span[1]:
                numbers = _predict(self.first.numbers, self.second.numbers, t)
                if numbers is not None:
                    return _rebuild(self.first.ops, numbers)
        return None


def _highest_degree(first: tuple, second: tuple) -> int:
    """The most sizes that change between two points in any one op's call: along their line each changes linearly,
    so that op's cost (a sum of products of them) is a polynomial of at most that degree."""
    if len(first) != len(second):
        return max((len(d) for d in (*first, *second)), default=0)  # the recordings differ in shape: never predicts
    return max((sum(a != b for a, b in zip(x, y)) + abs(len(x) - len(y)) for x, y in zip(first, second)), default=0)


def _predict(first: tuple, second: tuple, t: Fraction) -> tuple | None:
    """first + t * (second - first), exactly (integer arithmetic where the figures are whole, as FLOPs and bytes
    are; one rounding to float otherwise); None where an integer figure would not be a non-negative integer."""
    p, q = t.numerator, t.denominator
    predicted = []
    for a, b in zip(first, second):
        if a == b:
            predicted.append(a)
            continue
        whole = type(a) is int or (type(a) is float and a.is_integer() and b.is_integer())
        if whole:
            numerator = int(a) * q + p * (int(b) - int(a))
            if numerator < 0:
                return None
            if type(a) is int:
                if numerator % q:
                    return None
                predicted.append(numerator // q)
            else:
                predicted.append(numerator / q)  # correctly rounded
            continue
        value = Fraction(a) + t * (Fraction(b) - Fraction(a))
        if value < 0:
            return None
        predicted.append(float(value))
    return tuple(predicted)


def _rebuild(ops: list, numbers: tuple) -> list:
    """`ops` with the cost figures and operand sizes `numbers` (as `_op_numbers` lays them out). Each op and cost is
    built with every field given (`dataclasses.replace` and `_replace` cost more than the rest together: a routed
    count met for the first time rebuilds a dozen ops); tests/sol/test_recorder_shortcuts.py checks the fields."""
    import torch

    rebuilt = []
    position = 0
    for op in ops:
        cost = op.cost
        matrix = {}
        for precision in sorted(cost.matrix_flops):
            matrix[precision] = numbers[position]
            position += 1
        vector = {}
        for precision in sorted(cost.vector_flops):
            vector[precision] = numbers[position]
            position += 1
        special, read, written = numbers[position : position + 3]
        position += 3
        operands = []
        for operand, dtype in op.operands:
            operands.append((torch.Size(numbers[position : position + len(operand)]), dtype))
            position += len(operand)
        new_cost = type(cost)(
            matrix_flops=matrix,
            vector_flops=vector,
            special_ops=special,
            bytes_read=read,
            bytes_written=written,
            formula=f"{cost.formula} [at another routed count: affine in it, from a routed-loop template]",
        )
        rebuilt.append(type(op)(op.name, new_cost, tuple(operands), op.covered))
    return rebuilt
