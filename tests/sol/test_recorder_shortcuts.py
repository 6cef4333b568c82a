"""Cheaper paths through the recorder that must do what the general ones do: a routed loop's replay steps outside
the dispatch modes by popping the recorder alone where it is the only mode, a recording's totals are worked out
once only after it is finished, the cycle collector resumes after a run only once its recorder is gone, costs
shared between runs are what each run would work out alone, and a routed loop's prediction at a new count builds
every field of its ops."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

from solbench.sol.hybrid import HybridMode
from solbench.sol.recorder import OpRecorder, compulsory_bytes, total_cost
from solbench.sol.routed import _no_dispatch_modes


class _Passing(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_no_dispatch_mode_runs_inside_and_the_stack_is_restored_after():
    """With the recorder alone on the stack (a replay's case) and with another mode under it, nothing dispatches to
    a mode inside the block, and the stack is as it was afterwards (also when the block raises)."""
    for outer in (None, _Passing()):
        recorder = OpRecorder([], values=HybridMode())
        modes = [m for m in (outer, recorder) if m is not None]
        for mode in modes:
            mode.__enter__()
        try:
            before = _get_current_dispatch_mode_stack()
            with _no_dispatch_modes():
                assert _get_current_dispatch_mode_stack() == []
                _ = torch.ones(3) + 1  # recorded by no one
            assert _get_current_dispatch_mode_stack() == before
            try:
                with _no_dispatch_modes():
                    raise KeyError("inside")
            except KeyError:
                pass
            assert _get_current_dispatch_mode_stack() == before
            _ = torch.ones(2) * 2
        finally:
            for mode in reversed(modes):
                mode.__exit__(None, None, None)
        names = [op.name for op in recorder.recording.ops]
        assert "mul" in names and "add" not in names


def test_a_recording_s_totals_are_kept_only_once_it_is_finished():
    """Before `finish`, ops may still be appended: each call adds them up anew. After it, the figures are those of
    `total_cost` and `compulsory_bytes`, worked out once."""
    weights = torch.empty(8, 4, device="meta")
    recorder = OpRecorder([weights], values=HybridMode())
    with recorder:
        first = weights[2] * 2
    early_cost, early_bytes = recorder.recording.totals()
    with recorder:
        second = weights[5] * 3
    cost, needed = recorder.recording.totals()
    assert cost.vector_flops != early_cost.vector_flops and needed > early_bytes  # the later ops counted
    recording = recorder.finish([first, second])
    assert recording.totals() == (total_cost(recording), compulsory_bytes(recording))
    assert recording.totals() is recording.totals()


def test_the_cycle_collector_resumes_only_once_the_run_s_recorder_is_released(monkeypatch):
    """The collector resumes after the run with everything allocated since it paused in its youngest generation:
    the recorder's tables of every tensor it saw are released first, so that collection walks only what is kept."""
    import gc
    import types
    import weakref

    from solbench.sol import analysis

    made: list = []

    class Watched(OpRecorder):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(weakref.ref(self))

    resumed_with: list = []
    enable = gc.enable

    def watched_enable():
        resumed_with.append([ref() is not None for ref in made])
        enable()

    module = types.SimpleNamespace(run=lambda x: x * 2 + 1)
    monkeypatch.setattr(analysis, "OpRecorder", Watched)
    monkeypatch.setattr(gc, "enable", watched_enable)
    was_enabled = gc.isenabled()
    enable()
    try:
        recording = analysis._run_recorded(module, [torch.ones(4)], values=HybridMode())
    finally:
        if not was_enabled:
            gc.disable()
    assert [op.name for op in recording.ops] == ["mul", "add"]
    assert resumed_with == [[False]]


def test_costs_shared_between_runs_are_those_each_run_works_out_alone():
    """A problem's runs share their costs by signature: a later run's ops cost what a fresh recorder gives them,
    a matrix product included, whose rate comes from where its operands' values came from (bfloat16 in one run,
    float32 in the other, the same shapes and dtypes)."""
    import types

    from solbench.sol.analysis import _run_recorded

    def bf16(tensor):
        return tensor.to(torch.bfloat16).to(torch.float32)

    rounded = types.SimpleNamespace(run=lambda x, w: (bf16(x) @ bf16(w)).relu())
    plain = types.SimpleNamespace(run=lambda x, w: (x @ w).relu())

    def inputs():
        return [torch.empty(16, 32, device="meta"), torch.empty(32, 8, device="meta")]

    shared: dict = {}
    first = _run_recorded(rounded, inputs(), values=HybridMode(), costs=shared)
    assert shared
    later = _run_recorded(plain, inputs(), values=HybridMode(), costs=shared)
    alone = _run_recorded(plain, inputs(), values=HybridMode())
    assert later.ops == alone.ops
    assert [op.cost.matrix_flops for op in first.ops if op.name == "mm"] == [{"bfloat16": 2.0 * 16 * 32 * 8}]
    assert [op.cost.matrix_flops for op in later.ops if op.name == "mm"] == [{"float32": 2.0 * 16 * 32 * 8}]


def test_a_rebuilt_op_sets_every_field_of_its_op_and_cost():
    """A routed loop's prediction at a new count (`_rebuild`) builds each op and cost with every field given, not by
    copying: a field added to either must be given there too, or a prediction would drop it."""
    from dataclasses import fields

    from solbench.sol.costs import OpCost
    from solbench.sol.recorder import RecordedOp
    from solbench.sol.routed import _op_numbers, _rebuild

    assert [f.name for f in fields(OpCost)] == [
        "matrix_flops",
        "vector_flops",
        "special_ops",
        "bytes_read",
        "bytes_written",
        "formula",
    ]
    assert RecordedOp._fields == ("name", "cost", "operands", "covered")
    cost = OpCost({"bfloat16": 64.0}, {"float32": 8.0}, 2.0, 96, 32, "2*M*K*N")
    op = RecordedOp("mm", cost, ((torch.Size([4, 8]), torch.bfloat16), (torch.Size([8, 2]), torch.bfloat16)), True)
    numbers, _ = _op_numbers([op])
    doubled = tuple(n * 2 for n in numbers)
    [rebuilt] = _rebuild([op], doubled)
    assert rebuilt.name == "mm" and rebuilt.covered
    assert rebuilt.operands == ((torch.Size([8, 16]), torch.bfloat16), (torch.Size([16, 4]), torch.bfloat16))
    assert (rebuilt.cost.matrix_flops, rebuilt.cost.vector_flops, rebuilt.cost.special_ops) == (
        {"bfloat16": 128.0},
        {"float32": 16.0},
        4.0,
    )
    assert (rebuilt.cost.bytes_read, rebuilt.cost.bytes_written) == (192, 64)
    assert rebuilt.cost.formula.startswith("2*M*K*N [at another routed count")
