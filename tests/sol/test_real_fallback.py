"""References that need input values run on real inputs, and the analysis says so."""

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import AnalysisError, analyze_problem
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis

DATA_DEPENDENT = {
    "name": "ragged_sum",
    "axes": {
        "batch": {"type": "var"},
        "len_offsets": {"type": "var"},
        "total": {"type": "var"},
        "hidden": {"type": "const", "value": 64},
    },
    "constraints": ["len_offsets == batch + 1", "total == offsets[-1].item()"],
    "inputs": {
        "values": {"shape": ["total", "hidden"], "dtype": "float32"},
        "offsets": {"shape": ["len_offsets"], "dtype": "int32"},
    },
    "outputs": {"sums": {"shape": ["batch", "hidden"], "dtype": "float32"}},
    "reference": "import torch\ndef run(values, offsets):\n"
    "    return torch.stack([values[int(offsets[i].item()):int(offsets[i + 1].item())].sum(0)\n"
    "                        for i in range(offsets.shape[0] - 1)])\n",
}


def test_data_dependent_reference_runs_on_real_inputs(tmp_path):
    workload = {
        "uuid": "w",
        "axes": {"batch": 3, "len_offsets": 4, "total": 90},
        "inputs": {"values": {"type": "random"}, "offsets": {"type": "random"}},
    }
    problem = load_problem(write_problem(tmp_path / "ragged", DATA_DEPENDENT, [workload]))
    [result] = analyze_problem(problem, lookup("H200"), make_inputs=inputs_for_analysis)
    assert result.coverage.full
    assert result.coverage.execution.startswith("hybrid (aten._local_scalar_dense.default reads a value)")
    assert result.flops_by_class["vector"]["float32"] == 90 * 64  # every value summed once
    try:
        analyze_problem(problem, lookup("H200"))
    except AnalysisError as error:
        assert "needs real input values" in str(error)
    else:
        raise AssertionError("analysis without an input generator should fail for this reference")
