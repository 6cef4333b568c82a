"""Routed-loop templates carried from run to run (sol/routed.py's `RoutedTemplates`): a later run of the same module
replays what an earlier one learned, and only on the lines of sizes that earlier recordings checked.

Each run's recording must equal, op for op, the recording the same run makes without templates."""

import types

import torch

from solbench.sol.analysis import _run_recorded
from solbench.sol.hybrid import HybridMode
from solbench.sol.recorder import OpRecorder, compulsory_bytes, total_cost
from solbench.sol.routed import RoutedTemplates, with_routed_loops

REFERENCE = """
import torch

def expert(h, w):
    if h.shape[0] > 8:  # a branch on the routed count the suffix's own source does not show
        return torch.relu(h @ w) @ w
    return h * 2.0

def run(x, ids, w, rows):
    out = x.new_zeros(rows, 16)  # as many rows as the tokens, or more: a size no input row count shows
    for e in range(w.shape[0]):
        idx = torch.where(ids == e)[0]
        if idx.numel() == 0:
            continue
        h = expert(x[idx], w[e])
        out.index_add_(0, idx, h)
    return out
"""

WITHIN_THE_BRANCH = [1, 8, 2, 3, 4, 5, 6, 7]
"""Tokens per expert, all on the branch's small side: three recordings fix and check the line (8, 2, 3; the first
expert's output write is a key of its own), the rest lie between them."""


def _module() -> types.ModuleType:
    module = types.ModuleType("routed_store_reference")
    exec(compile(with_routed_loops(REFERENCE) or "", "routed_store_reference.py", "exec"), module.__dict__)
    return module


def _inputs(counts: list[int], rows: int = 64) -> list:
    tokens = 64
    ids = torch.cat([torch.full((c,), e) for e, c in enumerate(counts)])
    ids = torch.cat([ids, torch.full((tokens - ids.numel(),), 99)])  # tokens no expert takes
    x = torch.empty(tokens, 16, device="meta")
    return [x, ids, torch.empty(len(counts), 16, 16, device="meta"), rows]


def _figures(recording) -> tuple:
    ops = [
        (op.name, op.operands, op.cost.matrix_flops, op.cost.vector_flops, op.cost.bytes_read) for op in recording.ops
    ]
    return ops, total_cost(recording), compulsory_bytes(recording)


def _run(module, inputs: list, store: RoutedTemplates | None, monkeypatch) -> tuple[tuple, int]:
    """The recording's figures, and how many times the suffix's last op was recorded one by one (iterations run in
    full) rather than appended from a template."""
    recorded = []
    record = OpRecorder._record

    def counting(self, func, info, *args):
        recorded.append(info.name)
        return record(self, func, info, *args)

    with monkeypatch.context() as patch:
        patch.setattr(OpRecorder, "_record", counting)
        recording = _run_recorded(module, inputs, values=HybridMode(), loop_templates=True, templates=store)
    return _figures(recording), recorded.count("index_add_")


def _plain(module, inputs: list) -> tuple:
    return _figures(_run_recorded(module, inputs, values=HybridMode(), loop_templates=False))


def test_a_later_run_replays_the_templates_an_earlier_run_learned(monkeypatch):
    module, store = _module(), RoutedTemplates()
    first = _inputs(WITHIN_THE_BRANCH)
    _, in_full = _run(module, first, store, monkeypatch)
    assert in_full == 4  # the output's first write, then 8, 2 and 3 fix and check the line
    _, in_full = _run(module, first, store, monkeypatch)
    assert in_full == 1  # the first write's key, recorded once before, is confirmed: the rest is replayed
    shuffled = _inputs([1, 5, 3, 8, 7, 2, 6, 4])  # other experts, the same counts: on the line, within its span
    figures, in_full = _run(module, shuffled, store, monkeypatch)
    assert in_full == 0
    assert figures == _plain(module, shuffled)


def test_a_template_is_not_replayed_off_the_line_its_recordings_checked(monkeypatch):
    """A larger output (as another workload's token count makes it) moves the routed counts along another line,
    which the run checks for itself: the earlier line's figures carry the other output size."""
    module, store = _module(), RoutedTemplates()
    _run(module, _inputs(WITHIN_THE_BRANCH), store, monkeypatch)
    larger = _inputs(WITHIN_THE_BRANCH, rows=96)
    figures, in_full = _run(module, larger, store, monkeypatch)
    assert figures == _plain(module, larger)
    assert in_full == 4  # its own line, fixed and checked as the first run's was; not every expert


def test_a_template_is_not_replayed_beyond_the_counts_recorded_in_an_earlier_run(monkeypatch):
    """The same line, a routed count beyond those the earlier run recorded, where the helper branches: recorded in
    full, where it shows that the key's recordings disagree."""
    module, store = _module(), RoutedTemplates()
    _run(module, _inputs(WITHIN_THE_BRANCH), store, monkeypatch)
    beyond = _inputs([1, 20, 2, 3, 4, 5, 6, 7])
    figures, _ = _run(module, beyond, store, monkeypatch)
    assert figures == _plain(module, beyond)
    assert figures[1].matrix_flops  # the branch's matrix products are counted


CARRIED_PRECISION = """
import torch

def run(x, ids, w):
    total = x.new_zeros(16, dtype=torch.float32)  # shape-only, as x is
    for e in range(w.shape[0]):
        idx = torch.where(ids == e)[0]
        if idx.numel() == 0:
            continue
        total.add_((x[idx] @ w[e]).float()[0])  # a bfloat16 product's row: what `total` carries after the write
    return total @ w[0].float()
"""


def test_a_later_run_carries_a_stand_in_s_precision_as_the_run_that_recorded_it(monkeypatch):
    """A replay hands the recorder the tensors its recording made where nothing needs this iteration's own (here
    the row added in place): a later run's recorder never saw them, and must take them with the precision they had."""
    module = types.ModuleType("routed_store_precision")
    exec(compile(with_routed_loops(CARRIED_PRECISION) or "", "routed_store_precision.py", "exec"), module.__dict__)
    store = RoutedTemplates()
    x = torch.empty(64, 16, dtype=torch.bfloat16, device="meta")
    w = torch.empty(8, 16, 16, dtype=torch.bfloat16, device="meta")
    inputs = [x, _inputs([3])[1], w]  # one expert takes tokens: one write of `total`, which nothing after corrects
    _run(module, inputs, store, monkeypatch)
    _run(module, inputs, store, monkeypatch)  # a second recording at the same count confirms it
    figures, in_full = _run(module, inputs, store, monkeypatch)
    assert in_full == 0  # the write replayed: the precision `total` carries comes from the stand-in alone
    assert figures == _plain(module, inputs)
    assert set(figures[1].matrix_flops) == {"bfloat16"}


DEFAULT_DTYPE = """
import torch

def experts(x, ids, w):
    out = x.new_zeros(64, 16)
    for e in range(w.shape[0]):
        idx = torch.where(ids == e)[0]
        if idx.numel() == 0:
            continue
        scale = torch.ones(16)  # the default dtype's
        out.index_add_(0, idx, (x[idx] * scale).float())
    return out

def run(x, ids, w):
    first = experts(x, ids, w)
    torch.set_default_dtype(torch.float64)
    try:
        return first + experts(x, ids, w)  # the same loop, its `ones` now float64
    finally:
        torch.set_default_dtype(torch.float32)
"""


def test_a_template_is_not_replayed_under_other_global_torch_settings(monkeypatch):
    """The templates outlive one execution of the loop; torch's default dtype is in no name the suffix reads, so it
    is part of the key (the reviewer's repro: float64 work was booked as the float32 learned before)."""
    module = types.ModuleType("routed_store_default_dtype")
    exec(compile(with_routed_loops(DEFAULT_DTYPE) or "", "routed_store_default_dtype.py", "exec"), module.__dict__)
    inputs = _inputs(WITHIN_THE_BRANCH)[:3]
    figures, _ = _run(module, inputs, RoutedTemplates(), monkeypatch)
    assert figures == _plain(module, inputs)
    assert "float64" in figures[1].vector_flops


CUBIC = """
import torch

def run(x, sizes):
    base = x.new_zeros(4096)
    total = x.new_zeros(())
    for e in range(sizes.shape[0]):
        n, m, k = sizes[e].tolist()
        a, b, d = base[:n], base[:m], base[:k]  # sizes in the suffix's state, as a routed count is
        if n == 0:
            continue
        z = torch.addcmul(a[:, None, None], b[None, :, None], d[None, None, :])  # n * m * k elements
        total.add_(z.sum())
    return x * total
"""


def test_a_cost_of_higher_degree_along_a_line_is_checked_at_as_many_points_before_it_is_predicted(monkeypatch):
    """n, m and k move together along a line, so the ops' costs are cubic there: three points agreeing with a line
    (two fixing it, one checking) prove nothing; four are needed."""
    module = types.ModuleType("routed_store_cubic")
    exec(compile(with_routed_loops(CUBIC) or "", "routed_store_cubic.py", "exec"), module.__dict__)
    on_a_line = [(24, 24, 24), (16, 24, 32), (40, 24, 32), (8, 8, 64), (24, 24, 48), (40, 40, 32), (16, 16, 56)]
    inputs = [torch.zeros(8, 16), torch.tensor(on_a_line)]
    figures, _ = _run(module, inputs, RoutedTemplates(), monkeypatch)
    assert figures == _plain(module, inputs)
