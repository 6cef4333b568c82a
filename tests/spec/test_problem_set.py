"""The one rule for a problem's set, and reading trace files with file:line: field errors."""

import pytest

from solbench.spec.errors import SpecError
from solbench.spec.problem_set import problem_set
from solbench.spec.trace_files import read_traces


@pytest.mark.parametrize(
    "tags, folder, expected",
    [
        (["model:Toy", "set:Quant"], "L1/gemm", "Quant"),  # the tag wins over the folder
        ([], "L2/mlp", "L2"),  # else the first folder under the suite
        ([], "L2/deep/mlp", "L2"),
        ([], "mlp", "all"),  # a problem directly under the suite has none
        ([], ".", "all"),  # the suite is the problem itself
        ([3, "set:"], "L1/x", "L1"),  # an empty tag and non-strings are ignored
    ],
)
def test_problem_set(tmp_path, tags, folder, expected):
    assert problem_set(tags, tmp_path / folder, tmp_path) == expected


def test_problem_set_without_a_suite_is_the_tag_or_all(tmp_path):
    assert problem_set(["set:L1"]) == "L1"
    assert problem_set(["op:gemm"], tmp_path / "L1" / "x") == "all"
    assert problem_set([], tmp_path / "elsewhere" / "x", tmp_path / "suite") == "all"


def test_read_traces_names_file_line_and_field(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text(
        '{"definition": "d", "workload": {"uuid": "w", "axes": {}, "inputs": {}}}\n\n'
        '{"definition": "d", "workload": {"uuid": "w", "axes": {}, "inputs": {}}, '
        '"evaluation": {"status": "FINE", "environment": {"hardware": "x"}, "timestamp": "t"}}\n'
    )
    with pytest.raises(SpecError, match=r"traces\.jsonl:3: evaluation\.status: Input should be 'PASSED'"):
        read_traces(path)
    path.write_text('{"definition": "d", "workload": {"uuid": "w", "axes": {}, "inputs": {}}}\n')
    assert [t.workload.uuid for t in read_traces(path)] == ["w"]
    with pytest.raises(SpecError, match=r"missing\.jsonl: file not found"):
        read_traces(tmp_path / "missing.jsonl")
