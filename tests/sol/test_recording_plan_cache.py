"""A later process starts a problem's recording where an earlier one's first workload succeeded (sol/plan_cache.py):
it skips the stages that failed, with the same results and the same reason; a damaged record is ignored. And the
stages themselves: a shape-only run that meets a data-dependent op goes straight to values (fake tensors, whose
construction imports torch._dynamo, refuse the same op), one that meets an op without a meta kernel tries fake
tensors."""

from __future__ import annotations

import pytest
from torch._subclasses import fake_tensor

from conftest import write_problem
from solbench.cache_dir import cache_dir
from solbench.hardware import lookup
from solbench.sol import analysis, analyze_problem
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis

RAGGED_SUM = {  # slices by offsets read with .item(): meta tensors fail, hybrid values succeed
    "name": "ragged_sum",
    "axes": {"batch": {"type": "var"}, "len_offsets": {"type": "var"}, "total": {"type": "var"}},
    "constraints": ["len_offsets == batch + 1", "total == offsets[-1].item()"],
    "inputs": {
        "values": {"shape": ["total"], "dtype": "float32"},
        "offsets": {"shape": ["len_offsets"], "dtype": "int32"},
    },
    "outputs": {"sums": {"shape": ["batch"], "dtype": "float32"}},
    "reference": "import torch\ndef run(values, offsets):\n"
    "    return torch.stack([values[int(offsets[i].item()):int(offsets[i + 1].item())].sum()\n"
    "                        for i in range(offsets.shape[0] - 1)])\n",
}
WORKLOADS = [
    {
        "uuid": f"w{batch}",
        "axes": {"batch": batch, "len_offsets": batch + 1, "total": 10 * batch},
        "inputs": {"values": {"type": "random"}, "offsets": {"type": "random"}},
    }
    for batch in (2, 3)
]


@pytest.fixture
def fake_modes(monkeypatch) -> list[object]:
    """Every FakeTensorMode constructed (constructing one imports torch._dynamo in a fresh process)."""
    made: list[object] = []
    original = fake_tensor.FakeTensorMode.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(fake_tensor.FakeTensorMode, "__init__", counted)
    return made


HISTOGRAM = {  # torch.histogram has no meta kernel; fake tensors run the CPU kernel on zeros for its shapes
    "name": "histogram",
    "axes": {"N": {"type": "var"}},
    "inputs": {"x": {"shape": ["N"], "dtype": "float32"}},
    "outputs": {"counts": {"shape": [8], "dtype": "float32"}},
    "reference": "import torch\ndef run(x):\n    return torch.histogram(x, bins=8)[0]\n",
}


@pytest.fixture
def meta_attempts(monkeypatch) -> list[str]:
    """The workload of every shape-only (meta tensor) attempt."""
    made: list[str] = []
    original = analysis._run_recorded_meta

    def counted(problem, workload, module, plan):
        made.append(workload.uuid)
        return original(problem, workload, module, plan)

    monkeypatch.setattr(analysis, "_run_recorded_meta", counted)
    return made


def analyse(folder):
    results = analyze_problem(load_problem(folder), lookup("H200"), make_inputs=inputs_for_analysis)
    return [result.model_dump() for result in results]


def test_a_data_dependent_op_goes_straight_to_values(tmp_path, fake_modes, meta_attempts):
    folder = write_problem(tmp_path / "ragged", RAGGED_SUM, WORKLOADS)
    [first, _] = analyse(folder)
    assert first["coverage"]["execution"].startswith("hybrid (aten._local_scalar_dense.default reads a value)")
    assert meta_attempts == ["w2"], "the second workload should start where the first succeeded"
    assert fake_modes == [], "fake tensors were tried, though they refuse the op the meta run stopped at"


SCALED_BY_A_CONSTANT = {  # `item` of a tensor made from Python data: refused on meta tensors, answered by fake ones
    "name": "scaled",
    "axes": {"N": {"type": "var"}},
    "inputs": {"x": {"shape": ["N", 64], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["N", 64], "dtype": "float32"}},
    "reference": "import math, torch\ndef run(x):\n"
    "    rows = torch.tensor(x.shape[0]) // 2\n"
    "    return x[: rows.item()] / math.sqrt(torch.tensor(x.shape[-1], dtype=torch.float32))\n",
}


@pytest.mark.parametrize(
    "reference",
    [
        SCALED_BY_A_CONSTANT["reference"],
        "import math, torch\ndef run(x):\n    return x / math.sqrt(torch.tensor(x.shape[-1], dtype=torch.float32))\n",
    ],
    ids=["integer", "floating-point"],
)
def test_a_value_fake_tensors_hold_is_read_on_fake_tensors(tmp_path, reference):
    """Fake tensors keep the values of one-element tensors made from Python data: `item` of those is no reason
    to skip them (here without an input generator, which values would need)."""
    folder = write_problem(
        tmp_path / "scaled",
        {**SCALED_BY_A_CONSTANT, "reference": reference},
        [{"uuid": "n", "axes": {"N": 64}, "inputs": {"x": {"type": "random"}}}],
    )
    [result] = analyze_problem(load_problem(folder), lookup("H200"))
    assert result.coverage.execution == "fake"


def test_an_op_without_a_meta_kernel_runs_on_fake_tensors(tmp_path, fake_modes):
    folder = write_problem(
        tmp_path / "histogram", HISTOGRAM, [{"uuid": "n", "axes": {"N": 4096}, "inputs": {"x": {"type": "random"}}}]
    )
    [result] = analyse(folder)
    assert result["coverage"]["execution"] == "fake"  # (histogram itself has no cost rule: not covered)
    assert len(fake_modes) == 1


def test_second_analysis_skips_the_stages_that_failed_with_the_same_results(tmp_path, meta_attempts):
    folder = write_problem(tmp_path / "ragged", RAGGED_SUM, WORKLOADS)
    first = analyse(folder)
    assert meta_attempts == ["w2"]
    second = analyse(folder)
    assert meta_attempts == ["w2"], "the second analysis tried meta tensors again"
    assert second == first


@pytest.mark.parametrize("damaged", ['{"stage": 2, "reason"', '{"stage": 99, "reason": ""}'], ids=["cut", "no stage"])
def test_damaged_record_is_ignored(tmp_path, meta_attempts, damaged):
    folder = write_problem(tmp_path / "ragged", RAGGED_SUM, WORKLOADS)
    first = analyse(folder)
    [record] = (cache_dir() / "recording-plan").rglob("*.json")
    record.write_text(damaged)
    assert analyse(folder) == first
    assert meta_attempts == ["w2", "w2"], "a damaged record should leave the stages to be tried again"
