"""The precision policy on the T_SOL side: which matrix precision a tolerance admits, and the rate it buys."""

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import analyze_problem
from solbench.sol.precision import check_admissible, matrix_products_at, resolve_policy, round_operand, tolerance_error
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis
from solbench.spec.workload import Tolerance

MATMUL = {
    "name": "matmul_fp32",
    "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": 256}, "N": {"type": "const", "value": 256}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "float32"}, "B": {"shape": ["K", "N"], "dtype": "float32"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "float32"}},
    "reference": "import torch\ndef run(A, B):\n    return A @ B\n",
}
LOOSE = {"max_atol": 0.5, "max_rtol": 0.05}
TIGHT = {"max_atol": 1e-4, "max_rtol": 1e-4}


def matmul_problem(tmp_path, tolerance: dict, tags: list[str] = (), m: int = 512):
    workloads = [
        {
            "uuid": f"m{m}",
            "axes": {"M": m},
            "tolerance": tolerance,
            "inputs": {"A": {"type": "random"}, "B": {"type": "random"}},
        }
    ]
    return load_problem(write_problem(tmp_path / "mm", dict(MATMUL, tags=list(tags)), workloads))


def test_rounding_keeps_the_formats_mantissa():
    import torch

    x = torch.tensor([1 + 2**-9, 1 + 2**-12, 1 + 2**-20, 3.0], dtype=torch.float32)
    assert round_operand(x, "bf16").tolist() == [1.0, 1.0, 1.0, 3.0]
    assert round_operand(x, "tf32").tolist() == [1 + 2**-9, 1.0, 1.0, 3.0]  # 10 mantissa bits, to nearest even
    assert round_operand(x, "fp16").tolist() == [1 + 2**-9, 1.0, 1.0, 3.0]
    assert round_operand(x.double(), "bf16").dtype == torch.float64  # only fp32 operands are lowered


def test_emulated_products_are_lowered_and_elementwise_work_is_not():
    import torch

    a = torch.full((2, 2), 1 + 2**-12)
    with matrix_products_at("bf16"):
        product = torch.nn.functional.linear(a, torch.eye(2))
        total = a + 0
    assert product[0, 0].item() == 1.0 and total[0, 0].item() == 1 + 2**-12


def test_the_tolerance_decides_the_lowest_admissible_precision():
    import torch

    generator = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 512, generator=generator), torch.randn(512, 64, generator=generator)
    loose, errors = check_admissible(lambda v: v[0] @ v[1], [a, b], a @ b, Tolerance(**LOOSE))
    assert loose == "bf16" and 1e-4 < errors["bf16"][0] < 1e-2
    tf32_only, _ = check_admissible(
        lambda v: v[0] @ v[1], [a, b], a @ b, Tolerance(max_atol=0.1, max_rtol=0.0, required_matched_ratio=1.0)
    )
    assert tf32_only == "fp16"  # bf16's largest error is about 0.2 here, fp16's and TF32's about 0.03
    tight, errors = check_admissible(lambda v: v[0] @ v[1], [a, b], a @ b, Tolerance(**TIGHT))
    assert tight == "fp32" and set(errors) == {"bf16", "fp16", "tf32"}


def test_auto_policy_is_tolerance_only_for_imported_problems(tmp_path):
    assert resolve_policy(matmul_problem(tmp_path / "a", LOOSE, ["origin:sol-execbench"]), "auto") == "tolerance"
    plain = matmul_problem(tmp_path / "b", LOOSE)
    assert resolve_policy(plain, "auto") == "strict"
    (plain.root / "metadata.json").write_text("{}")
    assert resolve_policy(load_problem(plain.root), "auto") == "tolerance"
    with pytest.raises(ValueError, match="unknown precision policy"):
        resolve_policy(plain, "loose")


def _t_sol(problem, precision):
    [result] = analyze_problem(problem, lookup("B200_1500MHz"), make_inputs=inputs_for_analysis, precision=precision)
    return result


def test_t_sol_differs_between_policies_by_the_rate_ratio(tmp_path, monkeypatch):
    import solbench.sol.problem_precision as problem_precision

    monkeypatch.setattr(problem_precision, "CHECK_BUDGET_FLOPS", 1e9)  # the large workload takes the small one's
    wide = dict(
        MATMUL,
        axes={"M": {"type": "var"}, "K": {"type": "const", "value": 2048}, "N": {"type": "const", "value": 2048}},
    )
    workloads = [
        {
            "uuid": f"m{m}",
            "axes": {"M": m},
            "tolerance": LOOSE,
            "inputs": {"A": {"type": "random"}, "B": {"type": "random"}},
        }
        for m in (16, 16384)
    ]
    problem = load_problem(write_problem(tmp_path / "mm", wide, workloads))
    hardware = lookup("B200_1500MHz")
    strict = analyze_problem(problem, hardware, make_inputs=inputs_for_analysis, precision="strict")[1]
    tolerant = analyze_problem(problem, hardware, make_inputs=inputs_for_analysis, precision="tolerance")[1]
    assert strict.precision.policy == "strict" and strict.precision.matrix_precision == "fp32"
    assert tolerant.precision.policy == "tolerance" and tolerant.precision.matrix_precision == "bf16"
    assert strict.bound == tolerant.bound == "matrix"  # 16384 x 2048 x 2048: matrix-bound even at the bf16 rate
    ratio = hardware.matrix_rate("bfloat16")[0] / hardware.matrix_rate("float32")[0]
    assert ratio > 5
    assert strict.t_sol_ms / tolerant.t_sol_ms == pytest.approx(ratio, rel=1e-9)
    assert strict.flops == tolerant.flops  # only the rate changed


def test_a_tight_tolerance_keeps_fp32_and_the_check_is_cached(tmp_path, isolated_cache):
    problem = matmul_problem(tmp_path, TIGHT, m=64)
    strict, tolerant = _t_sol(problem, "strict"), _t_sol(problem, "tolerance")
    assert tolerant.precision.matrix_precision == "fp32" and "checked on this workload" in tolerant.precision.basis
    assert tolerant.t_sol_ms == strict.t_sol_ms
    assert list((isolated_cache / "precision").rglob("*.json"))


def test_large_workloads_take_the_precision_of_smaller_ones(tmp_path, monkeypatch):
    import solbench.sol.problem_precision as problem_precision

    monkeypatch.setattr(problem_precision, "CHECK_BUDGET_FLOPS", 1e8)
    workloads = [
        {
            "uuid": f"m{m}",
            "axes": {"M": m},
            "tolerance": LOOSE,
            "inputs": {"A": {"type": "random"}, "B": {"type": "random"}},
        }
        for m in (64, 4096)
    ]
    problem = load_problem(write_problem(tmp_path / "mm", MATMUL, workloads))
    small, large = analyze_problem(
        problem, lookup("B200_1500MHz"), make_inputs=inputs_for_analysis, precision="tolerance"
    )
    assert small.precision.matrix_precision == large.precision.matrix_precision == "bf16"
    assert large.precision.basis.startswith("tolerance: inferred from 1 smaller workload")


def test_inference_needs_a_tolerance_at_least_as_strict():
    from solbench.sol.problem_precision import at_least_as_strict

    assert at_least_as_strict(Tolerance(max_atol=1e-3, max_rtol=1e-3), Tolerance(max_atol=2e-3, max_rtol=1e-3))
    assert not at_least_as_strict(Tolerance(max_atol=2e-3), Tolerance(max_atol=1e-3))
    assert not at_least_as_strict(Tolerance(), Tolerance(max_error_cap=1.0))


def test_an_analysis_checks_its_two_smallest_workloads_and_infers_the_rest(tmp_path):
    workloads = [
        {
            "uuid": f"m{m}",
            "axes": {"M": m},
            "tolerance": LOOSE,
            "inputs": {"A": {"type": "random"}, "B": {"type": "random"}},
        }
        for m in (48, 16, 32)
    ]
    problem = load_problem(write_problem(tmp_path / "mm", MATMUL, workloads))
    for _ in range(2):  # the second analysis reads the two checks from the cache and checks nothing more
        results = analyze_problem(
            problem, lookup("B200_1500MHz"), make_inputs=inputs_for_analysis, precision="tolerance"
        )
        bases = {r.workload.uuid: r.precision.basis.split(" (")[0] for r in results}
        assert bases == {
            "m16": "tolerance: checked on this workload",
            "m32": "tolerance: checked on this workload",
            "m48": "tolerance: inferred from 2 smaller workload(s) with a tolerance as strict",
        }


def test_peak_used_says_why_the_bf16_rate_was_not_used(tmp_path):
    from solbench.sol.published import disagreement
    from solbench.spec.trace import PrecisionRecord

    hardware = lookup("B200_1500MHz")
    [result] = analyze_problem(matmul_problem(tmp_path, LOOSE, m=65536), hardware, precision="strict")
    result = result.model_copy(update={"bound": "matrix"})
    published = result.t_sol_ms / 6

    def under(policy, precision, basis):
        record = PrecisionRecord(policy=policy, matrix_precision=precision, basis=basis)
        return disagreement(result.model_copy(update={"precision": record}), published, hardware)

    assert "--precision strict" in disagreement(result, published, hardware)
    assert "does not admit bf16" in under("tolerance", "fp32", "tolerance: checked on this workload")
    assert "not determined" in under("tolerance", "fp32", "tolerance: not determined (too large)")
    assert not under("tolerance", "bf16", "tolerance: checked on this workload").startswith("peak used")


def test_an_evaluations_record_is_kept_apart_from_the_analysiss(tmp_path, isolated_cache):
    """The per-output errors a record carries were measured on one origin's inputs (the analysis's on the CPU, an
    evaluation's on its device): the downgrade rule must not take another origin's."""
    from solbench.sol.precision import load_cached, store_cached
    from solbench.spec.trace import PrecisionRecord

    problem = matmul_problem(tmp_path, LOOSE)
    [workload] = problem.workloads
    record = PrecisionRecord(policy="tolerance", matrix_precision="bf16", admitted_error=[0.004])
    store_cached(problem, workload, record)
    assert load_cached(problem, workload) == record
    assert load_cached(problem, workload, "evaluation cpu") is None


# --- the checks' cheap paths decide as the general ones do -------------------------------------------
SCALED = dict(MATMUL, reference="import torch\ndef run(A, B):\n    return (A * 262144.0) @ B / 262144.0\n")
"""The product's operand reaches about 10^6, past fp16's largest value (65504): fp16 products overflow, TF32 and
bf16 ones do not, and a power-of-two scale leaves their rounding errors as they are unscaled."""
TF32_ONLY = {"max_atol": 0.1, "max_rtol": 0.0, "required_matched_ratio": 1.0}
"""Met by TF32 products over K=256 (largest error about 0.02), not by bf16 ones (about 0.15)."""


@pytest.mark.parametrize(("tolerance", "admitted"), [(LOOSE, "bf16"), (TF32_ONLY, "tf32"), (TIGHT, "fp32")])
def test_an_analysis_decides_the_lowest_precision_the_tolerance_admits(tmp_path, isolated_cache, tolerance, admitted):
    import torch

    workloads = [
        {
            "uuid": "m64",
            "axes": {"M": 64},
            "tolerance": tolerance,
            "inputs": {"A": {"type": "random"}, "B": {"type": "random"}},
        }
    ]
    problem = load_problem(write_problem(tmp_path / "mm", dict(SCALED, tags=["origin:sol-execbench"]), workloads))
    threads = torch.get_num_threads()
    [result] = analyze_problem(problem, lookup("B200_1500MHz"), make_inputs=inputs_for_analysis)  # auto: tolerance
    record = result.precision
    assert (record.policy, record.matrix_precision) == ("tolerance", admitted)
    assert record.basis.startswith("tolerance: checked on this workload")
    tried = record.basis.split("(relative error by precision: ")[1]
    assert tried.startswith("bf16") and ("fp16 inf" in tried) == (admitted in ("tf32", "fp32"))  # stops when one passes
    assert torch.get_num_threads() == threads  # the check's one intra-op thread is given back


def test_tf32_rounding_keeps_nan_and_infinities_and_overflows_to_infinity():
    import math

    import torch

    x = torch.tensor([math.nan, math.inf, -math.inf, 3.4028234e38, -3.4028234e38, 1 + 2**-11, 1 + 3 * 2**-11, -0.0])
    rounded = round_operand(x, "tf32").tolist()
    assert math.isnan(rounded[0])
    assert rounded[1:] == [math.inf, -math.inf, math.inf, -math.inf, 1.0, 1 + 2**-9, -0.0]  # ties to even
    assert round_operand(x[1:], "tf32").tolist() == rounded[1:]  # the same without a NaN to keep
    strided = torch.arange(12, dtype=torch.float32).reshape(3, 4).t() * (1 + 2**-12)
    assert torch.equal(round_operand(strided, "tf32"), torch.arange(12.0).reshape(3, 4).t())


def test_tf32_rounding_by_the_float_split_matches_rounding_the_bits():
    """The three-pass float rounding gives, bit for bit, what rounding the bits as integers gives: random values
    over every normal exponent, exact ties (low 13 bits 0x1000, both parities of bit 13), values whose split
    overflows, infinities, a transposed layout."""
    import math

    import torch

    from solbench.sol.precision import _tf32, _tf32_bits

    generator = torch.Generator().manual_seed(0)
    bits = torch.randint(0x00800000, 0x7F7FFFFF, (1 << 20,), generator=generator, dtype=torch.int32)
    ties = (bits & ~0x1FFF) | 0x1000
    normal = torch.cat([bits, ties]).view(torch.float32)
    signs = torch.where(torch.rand(normal.shape, generator=generator) < 0.5, -1.0, 1.0)
    values = torch.cat([normal * signs, torch.tensor([math.inf, -math.inf, 3.4e38, -1e35, 0.0, -0.0])])
    assert torch.equal(_tf32(values).view(torch.int32), _tf32_bits(values).view(torch.int32))
    matrix = values[: 1 << 20].reshape(1024, 1024).t()
    assert torch.equal(_tf32(matrix).view(torch.int32), _tf32_bits(matrix).view(torch.int32))
    rounded = _tf32(torch.tensor([1.0, math.nan, 1 + 2**-11]))
    assert math.isnan(rounded[1]) and rounded[[0, 2]].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("noise", [0.0, 1e-4, 1e-2, 1.0])
def test_the_finite_comparison_decides_as_the_general_one(noise):
    import torch

    from solbench.sol.precision import _finite_parts, _general_parts

    generator = torch.Generator().manual_seed(3)
    ref = torch.randn(257, 33, generator=generator, dtype=torch.float64) * 3
    out = ref + noise * torch.randn(257, 33, generator=generator, dtype=torch.float64)
    out[0, :5] = ref[0, :5]  # some equal values
    finite, general = _finite_parts(out, ref), _general_parts(out, ref)
    for tolerance in (
        Tolerance(),
        Tolerance(max_atol=0.0, max_rtol=0.0, required_matched_ratio=1.0),
        Tolerance(max_atol=1e-3, max_rtol=0.05, max_error_cap=0.5),
        Tolerance(max_atol=2e-3, max_rtol=2e-3, required_matched_ratio=0.5),
    ):
        assert finite.judge(tolerance) == general.judge(tolerance)
        assert tolerance_error(out.float(), ref.float(), tolerance) == _general_parts(
            out.float().double(), ref.float().double()
        ).judge(tolerance)


def test_one_comparison_judges_each_tolerance_as_a_comparison_of_its_own():
    """A check's comparison is shared by every tolerance still open (the rtol-scaled magnitude among them): each
    verdict is the one a fresh comparison gives, whatever was judged before it."""
    import math

    import torch

    from solbench.sol.precision import OutputComparison

    generator = torch.Generator().manual_seed(5)
    ref = torch.randn(300, generator=generator, dtype=torch.float64)
    out = ref + 1e-3 * torch.randn(300, generator=generator, dtype=torch.float64)
    ref_with_nan, with_nan = ref.clone(), out.clone()
    ref_with_nan[3] = with_nan[3] = math.nan  # NaN matches NaN: the general comparison
    tolerances = [
        Tolerance(max_atol=atol, max_rtol=rtol, required_matched_ratio=ratio)
        for atol in (0.0, 5e-4, 2e-3)
        for rtol in (0.0, 1e-3)
        for ratio in (0.5, 0.99)
    ]
    for candidate, reference in ((out, ref), (with_nan, ref_with_nan)):
        shared = OutputComparison(candidate, reference)
        verdicts = [shared.judge(t) for t in tolerances]
        assert verdicts == [OutputComparison(candidate, reference).judge(t) for t in tolerances]
        assert len(set(verdicts)) > 1  # the tolerances do decide differently here


def test_non_finite_values_take_the_general_comparison():
    import math

    import torch

    ref = torch.tensor([1.0, math.inf, math.nan, 2.0])
    assert tolerance_error(ref.clone(), ref, Tolerance(required_matched_ratio=1.0)) == (True, 0.0)  # NaN matches NaN
    # a NaN where the reference is finite: a miss, and an infinite error norm over the finite elements
    assert tolerance_error(
        torch.tensor([1.0, math.inf, math.nan, math.nan]), ref, Tolerance(required_matched_ratio=0.75)
    ) == (False, math.inf)


@pytest.mark.slow
def test_a_check_does_not_import_torch_dynamo():
    """torch wraps a dispatch mode's handler in a dynamo guard unless the mode opts out: its first call imports
    torch._dynamo (seconds) and every op pays the guard."""
    import subprocess
    import sys

    code = (
        "import sys, torch\nfrom solbench.sol.precision import matrix_products_at\n"
        "with matrix_products_at('bf16'):\n    torch.ones(2, 2) @ torch.ones(2, 2)\n"
        "print('torch._dynamo' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "False"
