"""Cost rules the L1 set needs: convolution backward, and bookkeeping ops that cost nothing."""

import pytest

from conftest import write_problem
from solbench.hardware.spec import HardwareSpec
from solbench.sol import analyze_problem
from solbench.spec import load_problem

TOY = HardwareSpec(
    id="toy",
    name="toy",
    kind="gpu",
    memory_bandwidth_bytes_per_s=1e12,
    tensor_flops={"bfloat16": 100e12, "float16": 100e12, "tf32": 30e12},
    vector_flops={"float32": 10e12, "float64": 5e12},
    special_ops_per_s=1e12,
)


def analyze(tmp_path, inputs: dict, outputs: dict, reference: str):
    definition = {"name": "p", "axes": {}, "inputs": inputs, "outputs": outputs, "reference": reference}
    workload = {"uuid": "w", "axes": {}, "inputs": {name: {"type": "random"} for name in inputs}}
    [result] = analyze_problem(load_problem(write_problem(tmp_path / "p", definition, [workload])), TOY)
    assert result.coverage.full, result.coverage
    return result


def t(shape, dtype="float32"):
    return {"shape": [str(d) for d in shape], "dtype": dtype}


@pytest.mark.parametrize("mask, passes, bias", [([True, True, True], 2, True), ([False, True, False], 1, False)])
def test_convolution_backward_costs_one_forward_per_gradient(tmp_path, mask, passes, bias):
    n, c, h, k = 2, 8, 10, 3
    reference = (
        "import torch\n\ndef run(grad_output, x, weight):\n"
        "    grads = torch.ops.aten.convolution_backward(grad_output, x, weight, [weight.shape[0]], [1, 1], "
        f"[1, 1], [1, 1], False, [0, 0], 1, {mask})\n"
        "    return grads[1]\n"
    )
    result = analyze(
        tmp_path,
        {"grad_output": t([n, c, h, h]), "x": t([n, c, h, h]), "weight": t([c, c, k, k])},
        {"grad_weight": t([c, c, k, k])},
        reference,
    )
    forward_macs = n * c * h * h * c * k * k
    assert result.flops_by_class["matrix"]["float32"] == 2 * passes * forward_macs
    assert result.flops_by_class["vector"].get("float32", 0) == (n * c * h * h if bias else 0)


def test_index_bookkeeping_and_dtype_promotion_are_free(tmp_path):
    reference = (
        "import torch\n\ndef run(x):\n"
        "    rows, columns = torch.tril_indices(4, 4, offset=-1, device=x.device)\n"
        "    z = torch.bmm(x, x.transpose(1, 2)).to(torch.promote_types(x.dtype, torch.float32))\n"
        "    return z[:, rows, columns]\n"
    )
    result = analyze(tmp_path, {"x": t([3, 4, 8])}, {"pairs": t([3, 6])}, reference)
    assert result.flops_by_class["matrix"]["float32"] == 2 * 3 * 4 * 8 * 4
