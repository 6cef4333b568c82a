"""The float64 golden run where it does not fit the device: float32 stands in only where every output is 16-bit or
narrower, and the trace says what was done (attention at native video sizes: float64 SDPA holds every score)."""

import pytest
import torch

from solbench.evaluation.reference import ReferenceProgram
from solbench.spec.definition import Definition

# A real out-of-memory error from torch's allocator, raised where a float64 (or any wider-than-`LIMIT`) input arrives:
# the reference is what decides, as a real one whose float64 scores do not fit would.
REFERENCE = """import torch

def run(x):
    if x.element_size() > LIMIT:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 96.00 GiB")
    return (x.float() * 2).to(OUT)
"""


def _program(out_dtype: str, limit: int = 4, in_dtype: str = "bfloat16") -> ReferenceProgram:
    definition = Definition.model_validate(
        {
            "name": "doubles",
            "axes": {"n": {"type": "var"}},
            "inputs": {"x": {"shape": ["n"], "dtype": in_dtype}},
            "outputs": {"y": {"shape": ["n"], "dtype": out_dtype}},
            "reference": REFERENCE.replace("LIMIT", str(limit)).replace("OUT", f"torch.{out_dtype}"),
        }
    )
    return ReferenceProgram(definition, "cpu")


def test_a_float32_golden_stands_in_for_16_bit_outputs_and_says_so():
    program = _program("bfloat16")
    x = torch.tensor([1.5, -2.25, 3.0], dtype=torch.bfloat16)
    golden = program.run_golden([x])
    assert golden is not None and golden[0].dtype == torch.float64
    assert golden[0].tolist() == [3.0, -4.5, 6.0]
    assert program.golden_note.startswith("float32: the float64 run ran out of memory (")
    assert "CUDA out of memory" in program.golden_note


def test_float32_outputs_get_a_float32_golden_only_where_the_reference_is_far_coarser():
    program = _program("float32", in_dtype="float32")
    x = torch.tensor([1.0, 1.0 / 3.0, -2.0 / 7.0])
    assert program.run_golden([x]) is None  # without the reference's outputs nothing can be judged
    assert "need not be finer than the float32 outputs" in program.golden_note
    assert program.run_golden([x], [x * 2]) is None  # a float32 reference: as fine as a float32 golden
    assert "no finer than the reference" in program.golden_note
    bf16_work = (x.bfloat16() * 2).float()  # a float32 output carrying bf16 work (Wan2.2's residual stream)
    golden = program.run_golden([x], [bf16_work])
    assert golden is not None and program.golden_note.startswith("float32: the float64 run ran out of memory")


def test_a_float64_run_that_fits_is_used_and_leaves_no_note():
    program = _program("bfloat16", limit=8)
    golden = program.run_golden([torch.ones(3, dtype=torch.bfloat16)])
    assert golden is not None and program.golden_note is None


def test_when_float32_does_not_fit_either_nothing_is_claimed():
    program = _program("bfloat16", limit=2)
    assert program.run_golden([torch.ones(3, dtype=torch.bfloat16)]) is None
    assert program.golden_note.startswith("not run:") and "so did float32" in program.golden_note


@pytest.mark.parametrize("message", ["DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes"])
def test_the_cpu_allocator_running_out_counts_too(message):
    from solbench.evaluation.reference import _out_of_memory

    assert _out_of_memory(RuntimeError(message)) and not _out_of_memory(RuntimeError("shape mismatch"))
