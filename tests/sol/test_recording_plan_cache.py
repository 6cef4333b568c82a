"""A later process starts a problem's recording where an earlier one's first workload succeeded (sol/plan_cache.py):
it skips the fake-tensor attempt (and torch._dynamo's import) for references that need values, with the same
results and the same reason; a damaged record is ignored."""

from __future__ import annotations

import pytest
from torch._subclasses import fake_tensor

from conftest import write_problem
from solbench.cache_dir import cache_dir
from solbench.hardware import lookup
from solbench.sol import analyze_problem
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis

RAGGED_SUM = {  # slices by offsets read with .item(): fake tensors fail, hybrid values succeed
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


def analyse(folder):
    results = analyze_problem(load_problem(folder), lookup("H200"), make_inputs=inputs_for_analysis)
    return [result.model_dump() for result in results]


def test_second_analysis_skips_fake_tensors_with_the_same_results(tmp_path, fake_modes):
    folder = write_problem(tmp_path / "ragged", RAGGED_SUM, WORKLOADS)
    first = analyse(folder)
    assert len(fake_modes) == 1 and first[0]["coverage"]["execution"].startswith("hybrid (DataDependentOutputException")
    second = analyse(folder)
    assert len(fake_modes) == 1, "the second analysis tried fake tensors again"
    assert second == first


@pytest.mark.parametrize("damaged", ['{"stage": 2, "reason"', '{"stage": 99, "reason": ""}'], ids=["cut", "no stage"])
def test_damaged_record_is_ignored(tmp_path, fake_modes, damaged):
    folder = write_problem(tmp_path / "ragged", RAGGED_SUM, WORKLOADS)
    first = analyse(folder)
    [record] = (cache_dir() / "recording-plan").rglob("*.json")
    record.write_text(damaged)
    assert analyse(folder) == first
    assert len(fake_modes) == 2, "a damaged record should leave the stages to be tried again"
