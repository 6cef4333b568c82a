"""The operand flush: the native helper covers every line of every operand, runs on inputs and output buffers, falls
back to the streaming flush (saying why) where it cannot be built, and cannot be swapped out under the guard.

No timing here: whether a flushed line is really gone is the processor's business (benchmarks/cpu_flush.py shows
what the flush does to a memory-bound kernel's time)."""

import random
import shutil
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch

from conftest import make_solution, vector_add_problem  # noqa: F401  (fixture)
from solbench.guard.runtime import _fingerprint
from solbench.sandbox.flush import CpuCacheFlusher, NoFlush, OperandCacheFlusher, flusher_for
from solbench.sandbox.line_flush import (
    HelperUnavailable,
    build_helper,
    lines_covering,
    load_helper,
    merge_spans,
    tensor_ranges,
)

needs_compiler = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler to build the helper"
)


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    return load_helper(build_helper(tmp_path_factory.mktemp("native")))


def test_spans_merge_where_they_overlap_or_touch():
    assert merge_spans([(10, 20), (0, 5), (15, 30), (30, 31), (40, 41)]) == [(0, 5), (10, 31), (40, 41)]
    assert merge_spans([]) == []


@pytest.mark.parametrize(
    "start, length, lines", [(0, 64, 1), (1, 64, 2), (63, 1, 1), (63, 2, 2), (64, 0, 0), (128, 129, 3), (100, 28, 1)]
)
def test_lines_covering_counts_every_line_holding_a_byte(start, length, lines):
    assert lines_covering(start, length, 64) == lines


@needs_compiler
def test_the_native_loop_visits_every_line_of_every_range(helper):
    assert helper.line_bytes in (32, 64, 128, 256) and helper.instruction in ("clflushopt", "clflush", "dc civac")
    generator = random.Random(7)
    ranges = [
        (generator.randrange(1 << 20, 1 << 30), generator.choice([0, 1, 63, 64, 65, 4096, 100_003])) for _ in range(50)
    ]
    expected = sum(lines_covering(start, length, helper.line_bytes) for start, length in ranges)
    assert helper.count_lines(ranges) == expected
    assert helper.count_lines([]) == 0


@needs_compiler
def test_flushing_real_buffers_leaves_their_content_alone(helper):
    x = torch.randn(100_003)
    before = x.clone()
    ranges = tensor_ranges([x])
    assert helper.flush_ranges(ranges) == helper.count_lines(ranges) >= x.numel() * 4 // helper.line_bytes
    assert torch.equal(x, before)


def test_a_view_stands_for_the_bytes_it_spans_and_overlapping_views_merge():
    base = torch.zeros(1000)
    other = torch.zeros(10, dtype=torch.float64)
    ranges = tensor_ranges([base[10:20], base[15:30], base[500:600].view(10, 10).t(), 3, None, other, torch.empty(0)])
    assert ranges == sorted([(base[10:].data_ptr(), 20 * 4), (base[500:].data_ptr(), 100 * 4), (other.data_ptr(), 80)])


class _RecordingHelper:
    def __init__(self):
        self.calls = []

    def flush_ranges(self, ranges):
        self.calls.append(list(ranges))
        return len(ranges)


def test_the_operand_flusher_flushes_what_the_call_reads_and_writes_at_each_flush():
    inputs, outputs, returned = [torch.randn(64), torch.randn(32), 1e-6], [torch.empty(16)], []
    recording = _RecordingHelper()
    flusher = OperandCacheFlusher(lambda: [*inputs, *outputs, *returned], recording)
    flusher.flush()
    assert recording.calls[-1] == tensor_ranges([*inputs, *outputs]) and flusher.bytes == 64 * 4 + 32 * 4 + 16 * 4
    returned.append(torch.randn(8))  # the previous call's output exists now, and is flushed with the rest
    flusher.flush()
    assert len(recording.calls[-1]) == 4 and flusher.bytes == (64 + 32 + 16 + 8) * 4
    assert (flusher.mode, flusher.note) == ("operands", None)


def test_the_flusher_asked_for_is_the_one_made_and_a_missing_helper_falls_back_saying_why():
    assert isinstance(flusher_for("cpu", False), NoFlush)
    stream = flusher_for("cpu", True, "stream", lambda: [], _RecordingHelper())
    assert isinstance(stream, CpuCacheFlusher) and stream.mode == "stream" and stream.note is None
    assert isinstance(flusher_for("cpu", True, "operands", lambda: [], _RecordingHelper()), OperandCacheFlusher)
    fallback = flusher_for("cpu", True, "operands", lambda: [], None, "no C compiler (cc)")
    assert isinstance(fallback, CpuCacheFlusher) and fallback.mode == "stream"
    assert "no C compiler (cc)" in fallback.note


def test_without_a_compiler_the_helper_is_unavailable_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(HelperUnavailable, match="no C compiler"):
        build_helper(tmp_path / "native")


@needs_compiler
def test_the_guard_fingerprints_the_helper_and_sees_it_swapped(helper):
    """The guard's first check, on the entries it is handed (a whole snapshot here would install its audit hook in
    the test process); the corpus's operand_flush_* entries run the whole guard in a sandbox."""
    from solbench.sandbox.child import SandboxServer
    from solbench.sandbox.protected import integrity_list

    server = SimpleNamespace(line_flush=helper)
    entries = {entry.label: entry for entry in integrity_list(SandboxServer, server).resolved()}
    assert {
        "solbench.sandbox.flush.OperandCacheFlusher.flush",
        "LineFlushHelper._flush",
        "SimpleNamespace.line_flush",
        "solbench.sandbox.line_flush.LineFlushHelper.flush_ranges",
    } <= set(entries)

    def changed(before):
        return [
            label
            for label, entry in entries.items()
            if _fingerprint(getattr(entry.owner, entry.name, None)) != before[label]
        ]

    before = {label: _fingerprint(getattr(entry.owner, entry.name)) for label, entry in entries.items()}
    original = helper._flush
    object.__setattr__(helper, "_flush", helper._count)  # counts, flushes nothing
    try:
        assert changed(before) == ["LineFlushHelper._flush"]
    finally:
        object.__setattr__(helper, "_flush", original)
    assert changed(before) == []
    server.line_flush = None  # the helper itself dropped: the server would stream instead
    assert changed(before) == ["SimpleNamespace.line_flush"]


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("dps", [True, False], ids=["dps", "returning"])
def test_an_evaluation_flushes_the_inputs_and_outputs_and_says_so(vector_add_problem, fast_config, dps):
    from solbench.evaluation import evaluate
    from solbench.spec import load_problem

    problem = load_problem(vector_add_problem)
    source = (
        "import torch\ndef run(x, y, z):\n    torch.add(x, y, out=z)\n" if dps else "def run(x, y):\n    return x + y\n"
    )
    traces = evaluate(problem, make_solution(source, dps=dps), replace(fast_config, time_reference=dps))
    for trace in traces:
        size = trace.workload.axes["N"]
        timing = trace.evaluation.solbench.timing
        assert trace.evaluation.status.value == "PASSED", trace.evaluation.log
        assert (timing.flush_mode, timing.flush_note) == ("operands", None)
        assert timing.flush_bytes == 3 * 4 * size  # x, y and the output (the buffer, or the previous call's)
        if dps:
            assert trace.evaluation.solbench.reference_timing.flush_mode == "operands"


@pytest.mark.slow
def test_without_a_compiler_the_evaluation_streams_and_the_trace_says_why(
    vector_add_problem, fast_config, monkeypatch, tmp_path
):
    from solbench.evaluation import evaluate
    from solbench.spec import load_problem

    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    problem = load_problem(vector_add_problem)
    traces = evaluate(
        problem, make_solution("def run(x, y):\n    return x + y\n"), replace(fast_config, time_reference=True)
    )
    timing, reference = traces[0].evaluation.solbench.timing, traces[0].evaluation.solbench.reference_timing
    for summary in (timing, reference):
        assert summary.flush_mode == "stream" and summary.flush_bytes > 0
        assert "operand flush unavailable" in summary.flush_note and "no C compiler" in summary.flush_note
