"""Which inputs timing perturbs (roles.py), and that the suite's integer-coded problems rotate validly."""

from math import prod
from pathlib import Path

import pytest
import torch

from solbench.evaluation.reference import ReferenceProgram
from solbench.evaluation.roles import timing_perturbations
from solbench.sandbox.rotation import perturbed_inputs
from solbench.spec.definition import Definition
from solbench.spec.dtypes import same_bits
from solbench.spec.inputs import InputContext, generate_inputs
from solbench.spec.problem import find_problem_folders, load_problem

SUITE = Path(__file__).resolve().parents[2] / "problems"
SEED = 4242
# The suite's problems whose data includes integer codes: int8 (W8A8) and int4 packed in int32 (AWQ, GPTQ).
INTEGER_CODED = {
    "whisper-large-v3_int8_w8a8_gemm_fc1",
    "qwen2-5-7b-instruct_awq_int4_gemm_k_proj",
    "mistral-7b-v0-1_gptq_int4_gemm_k_proj",
}

INPUTS = {
    "a": ("int8", None),
    "a_scale": ("float32", None),
    "a_zp": ("int8", None),
    "codes": ("int8", None),
    "qweight": ("int32", None),
    "qzeros": ("int32", None),
    "scales": ("float16", None),
    "w_packed": ("int32", "int4 weights, 8 per word"),
    "w_fp8": ("float8_e4m3fn", None),
    "w_scale": ("float8_e4m3fn", None),
    "w_sf": ("float8_e8m0fnu", None),
    "x": ("bfloat16", None),
    "expert_ids": ("int32", None),
    "cu_seqlens": ("int32", None),
    "top_k": ("int32", None),
    "src_rows": ("int32", None),
    "attn_mask": ("int8", None),
    "seq_lens": ("int32", None),
}
EXPECTED = {
    "a": "negate",
    "a_scale": "multiply",
    "a_zp": "keep",
    "codes": "negate",
    "qweight": "complement_nibbles",
    "qzeros": "keep",
    "scales": "multiply",
    "w_packed": "complement_nibbles",
    "w_fp8": "flip_signs",
    "w_scale": "keep",
    "w_sf": "keep",
    "x": "multiply",
    "expert_ids": "keep",
    "cu_seqlens": "keep",
    "top_k": "keep",
    "src_rows": "keep",
    "attn_mask": "keep",
    "seq_lens": "keep",
}


def test_only_data_inputs_are_perturbed_each_in_its_format():
    definition = Definition.model_validate(
        {
            "name": "roles",
            "axes": {"N": {"type": "var"}},
            "outputs": {"out": {"shape": ["N"], "dtype": "float32"}},
            "inputs": {
                name: {"shape": ["N"], "dtype": dtype, "description": description}
                for name, (dtype, description) in INPUTS.items()
            },
            "reference": "def run(" + ", ".join(INPUTS) + "):\n    return x\n",
        }
    )
    assert dict(zip(definition.inputs, timing_perturbations(definition))) == EXPECTED


@pytest.fixture(scope="module")
def suite():
    return {problem.name: problem for problem in map(load_problem, find_problem_folders(SUITE))}


def test_no_suite_problem_has_timed_inputs_that_repeat(suite):
    unrotated = [name for name, problem in suite.items() if set(timing_perturbations(problem.definition)) == {"keep"}]
    assert not unrotated


def test_the_integer_coded_problems_named_here_are_all_of_the_suites(suite):
    def integer_coded(definition):
        integers = {t.dtype for t in definition.inputs.values() if t.dtype.startswith("int")}
        return "int8" in integers or bool(integers and "int4" in (definition.op_type or ""))

    assert {name for name, problem in suite.items() if integer_coded(problem.definition)} == INTEGER_CODED


def _smallest_workload(problem):
    def elements(workload):
        axes = problem.axes_of(workload)
        return sum(prod(problem.definition.shape_of(t, axes) or ()) for t in problem.definition.inputs.values())

    return min(problem.workloads, key=elements)


@pytest.mark.parametrize("name", sorted(INTEGER_CODED))
def test_integer_codes_rotate_and_the_reference_stays_valid(name, suite):
    problem = suite[name]
    definition, workload = problem.definition, _smallest_workload(problem)
    reference = ReferenceProgram(definition, "cpu")
    inputs = generate_inputs(InputContext(problem, workload, problem.axes_of(workload), "cpu"), SEED, reference.module)
    perturbations = timing_perturbations(definition)
    timed = perturbed_inputs(inputs, 1, SEED, perturbations)
    integer = [i for i, spec in enumerate(definition.inputs.values()) if spec.dtype.startswith("int")]
    changed = [i for i in integer if not same_bits(inputs[i], timed[i])]
    assert changed, f"{name}: no integer data input varies under timing"
    for i in integer:
        if perturbations[i] == "keep":  # zero points, indices, offsets: bit for bit as drawn
            assert same_bits(inputs[i], timed[i]), list(definition.inputs)[i]
    # The codes alone change the answer (a cache keyed on them would replay a wrong one) and keep it finite.
    codes_only = [timed[i] if i in changed else value for i, value in enumerate(inputs)]
    base, varied = reference.run(inputs), reference.run(codes_only)
    for before, after in zip(base, varied):
        assert torch.isfinite(after.float()).all()
        assert not torch.equal(before, after)
