"""The integrity guard's list of harness operators covers what the harness's tensor work dispatches."""

import os
import subprocess
import sys

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from solbench.guard.runtime import HARNESS_OPS, _dispatch_tables
from solbench.sandbox.calling import OutputSpec, materialized, sentinel_outputs
from solbench.sandbox.flush import CpuCacheFlusher, OperandCacheFlusher
from solbench.sandbox.line_flush import build_helper, load_helper
from solbench.sandbox.rotation import PERTURBATIONS, InputRotation
from solbench.sandbox.wire import _encode_value


class _Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        overload = func._overloadname
        self.ops.add(str(func._schema.name) + ("" if overload == "default" else f".{overload}"))
        return func(*args, **(kwargs or {}))


def _input_sets():
    return [
        [
            torch.randn(64, 32),
            torch.randn(64, 32).to(torch.bfloat16),
            torch.randn(64, 32).to(torch.float8_e4m3fn),
            torch.randint(-127, 127, (64, 32), dtype=torch.int8),
            torch.randint(0, 2**31 - 1, (64, 4), dtype=torch.int32),
            torch.randint(0, 64, (64,)),
            3,
        ]
        for _ in range(2)
    ]


@pytest.mark.slow
def test_every_operator_the_harness_dispatches_is_guarded():
    perturbations = ["multiply", "multiply", "flip_signs", "negate", "complement_nibbles", "keep", "keep"]
    assert set(perturbations) == set(PERTURBATIONS)
    specs = [
        OutputSpec("a", (4, 4), "float32"),
        OutputSpec("b", (4,), "float8_e4m3fn"),
        OutputSpec("c", (4,), "int32"),
        OutputSpec("d", (4,), "bool"),
        OutputSpec("e", (4,), "bfloat16"),
    ]
    input_sets = _input_sets()
    recorder = _Recorder()
    helper = load_helper(build_helper())
    with recorder:
        rotation = InputRotation(input_sets, perturbations, perturb_seed=5)
        flusher = CpuCacheFlusher(1 << 20)
        operand_flusher = OperandCacheFlusher(lambda: rotation.live, helper)
        for iteration in (-1, 0, 1, 2):
            rotation.prepare(iteration)
            flusher.flush()
            operand_flusher.flush()
            for buffer, fresh in zip(sentinel_outputs(specs, "cpu"), sentinel_outputs(specs, "cpu")):
                buffer.copy_(fresh)
        rotation.mutated(0)
        outputs = materialized([rotation.live[0].t(), rotation.live[0]], rotation.storages)
        _encode_value([t.clone() for t in outputs], [])
    assert len(recorder.ops) > 15
    assert recorder.ops <= set(HARNESS_OPS), sorted(recorder.ops - set(HARNESS_OPS))


@pytest.mark.filterwarnings("ignore:Warning only once for all operators")
def test_a_kernel_registered_over_a_harness_operator_changes_its_table():
    before = _dispatch_tables()
    assert set(before) == set(HARNESS_OPS)
    library = torch.library.Library("aten", "IMPL")
    library.impl("zero_", lambda tensor: tensor, "CPU")
    try:
        after = _dispatch_tables()
        assert [op for op in HARNESS_OPS if before[op] != after[op]] == ["aten::zero_"]
    finally:
        library._destroy()
    assert _dispatch_tables() == before


NATIVE_SIGNALS = """
import ctypes, faulthandler, sys
faulthandler.disable()
import torch
from solbench.guard.runtime import GuardViolation, IntegrityGuard, IntegrityList

def outcome(change):
    guard = IntegrityGuard.snapshot(IntegrityList(required=()))
    change()
    try:
        guard.verify("after the call")
    except GuardViolation as violation:
        print("refused:", violation)
    else:
        print("accepted")

outcome(lambda: None)
outcome(faulthandler.enable)  # sigaction from C, for SIGSEGV and others: Python's signal module does not see it
timer = ctypes.c_void_p()
outcome(lambda: ctypes.CDLL(None).timer_create(1, None, ctypes.byref(timer)))  # a POSIX timer (CLOCK_MONOTONIC)
"""


@pytest.mark.slow
def test_signal_handlers_and_timers_installed_from_native_code_are_refused(tmp_path):
    script = tmp_path / "native_signals.py"
    script.write_text(NATIVE_SIGNALS)
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONFAULTHANDLER"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=environment)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0] == "accepted", done.stdout + done.stderr
    assert all(line.startswith("refused:") and "native code" in line for line in lines[1:3]), done.stdout
