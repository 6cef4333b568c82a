"""Addressable time onto suite problems, and the Amdahl projection, on attributions written by hand."""

import json
import math

import pytest

from solbench.reach.attribution import Attribution, GroupKey
from solbench.reach.errors import ReachError
from solbench.reach.mapping import cover
from solbench.reach.projection import project
from solbench.reach.speedups import Speedup, assumed, speedups_from_export
from solbench.reach.suite_index import load_suite


def write_problem(root, set_name, name, op_type, sizes=(), model=None):
    folder = root / set_name / name
    folder.mkdir(parents=True)
    axes = {f"a{i}": {"type": "const", "value": v} for i, v in enumerate(sizes)}
    tags = [f"set:{set_name}"] + ([f"model:{model}"] if model else [])
    (folder / "definition.json").write_text(json.dumps({"name": name, "op_type": op_type, "tags": tags, "axes": axes}))


@pytest.fixture
def suite(tmp_path):
    write_problem(tmp_path, "L1", "norm_h4096", "rmsnorm", (4096,))
    write_problem(tmp_path, "L1", "norm_h2048", "rmsnorm", (2048,))
    write_problem(tmp_path, "DLRM", "dlrm_top_mlp", "mlp", (3456, 1024), model="DLRM-DCNv2 (MLPerf)")
    write_problem(tmp_path, "DLRM", "dlrm_bottom_mlp", "mlp", (13, 512), model="dlrm-dcnv2")
    write_problem(tmp_path, "DLRM", "dlrm_bags", "embedding_bag", (128,), model="dlrm-dcnv2")
    write_problem(tmp_path, "L1", "other_bags", "embedding_bag", (128,))
    return load_suite(tmp_path)


def attribution(groups):
    steps = len(next(iter(groups.values())))
    total = [sum(v[i] for v in groups.values()) for i in range(steps)]
    return Attribution(step_us=[t * 2 for t in total], classes={"addressable": total}, groups=groups)


def test_best_evidence_wins_and_uncovered_time_is_listed(suite):
    norm = GroupKey("addressable", "rmsnorm", "forward", "aten::mul", 2048)
    odd_norm = GroupKey("addressable", "rmsnorm", "forward", "aten::pow", 1000)
    bags = GroupKey("addressable", "embedding_bag", "forward", "aten::_embedding_bag", 128)
    rope = GroupKey("addressable", "rope", "forward", "aten::cat", 64)
    norm_bwd = GroupKey("addressable", "rmsnorm", "backward", "aten::mul", 2048)
    relu_top = GroupKey("addressable", "mlp", "forward", "aten::clamp_min", 1024)
    relu_other = GroupKey("addressable", "mlp", "forward", "aten::clamp_min", 256)
    result = cover(
        attribution(
            {
                norm: [10.0, 20.0],
                odd_norm: [4.0, 4.0],
                bags: [30.0, 30.0],
                rope: [5.0, 5.0],
                norm_bwd: [1.0, 1.0],
                relu_top: [2.0, 2.0],
                relu_other: [2.0, 2.0],
            }
        ),
        suite,
        "dlrm-dcnv2",
    )
    assert result.group_match[norm] == ("shape", ("norm_h2048",))
    assert result.group_match[bags] == ("model", ("dlrm_bags",))  # the model's own problem, not the other
    # several problems of the model: the one of the op's shape, else all of them
    assert result.group_match[relu_top] == ("model", ("dlrm_top_mlp",))
    assert set(result.group_match[relu_other][1]) == {"dlrm_top_mlp", "dlrm_bottom_mlp"}
    level, shared = result.group_match[odd_norm]
    assert level == "family" and set(shared) == {"norm_h4096", "norm_h2048"}
    assert result.problem_us["norm_h2048"] == [12.0, 22.0]  # 10|20 alone plus half of 4
    assert result.problem_us["dlrm_bags"] == [30.0, 30.0]
    assert result.uncovered_us == {("rope", "forward"): [5.0, 5.0], ("rmsnorm", "backward"): [1.0, 1.0]}


def test_an_empty_or_missing_problems_folder(tmp_path):
    assert load_suite(tmp_path) == []
    with pytest.raises(ReachError, match="--problems"):
        load_suite(tmp_path / "absent")


def test_amdahl_point_estimate_and_a_spread_free_interval():
    # 100 µs steps, 40 covered by p at 2x: 100 / 80 - 1 = 25 %
    result = project([100.0, 100.0], {"p": [40.0, 40.0]}, assumed(["p"], 2.0), "assumed")
    assert result.gain == pytest.approx(0.25)
    assert result.low == pytest.approx(0.25) and result.high == pytest.approx(0.25)


def test_the_interval_widens_with_the_profile_and_the_speedups_spread():
    steady = project([100.0, 100.0], {"p": [40.0, 40.0]}, {"p": Speedup(2.0, 0.3)}, "x")
    assert steady.low < 0.25 < steady.high
    noisy = project([80.0, 120.0], {"p": [40.0, 40.0]}, {"p": Speedup(2.0, 0.0)}, "x")
    assert noisy.low == pytest.approx(120 / 100 - 1) and noisy.high == pytest.approx(80 / 60 - 1)
    # problems without a speedup change nothing
    assert project([100.0], {"q": [50.0]}, {"p": Speedup(3.0)}, "x").gain == 0.0


def test_speedups_from_an_export(tmp_path):
    path = tmp_path / "board.json"
    path.write_text(json.dumps({"speedups": {"a": 2.0, "b": [1.0, 4.0]}}))
    speedups = speedups_from_export(path)
    assert speedups["a"].mean == 2.0 and speedups["b"].mean == pytest.approx(2.0)
    assert speedups["b"].log_std == pytest.approx(math.log(4) / math.sqrt(2))
    path.write_text(json.dumps({"speedups": {"a": -1}}))
    with pytest.raises(ReachError, match="speedups.a"):
        speedups_from_export(path)


def test_speedups_from_traces_take_each_problems_best_solution(tmp_path):
    from solbench.reach.speedups import speedups_from_traces
    from solbench.spec.trace import Correctness, Environment, Evaluation, EvaluationStatus, Performance, Trace
    from solbench.spec.workload import Workload

    def trace(solution, workload, latency, status=EvaluationStatus.PASSED):
        evaluation = Evaluation(
            status=status,
            environment=Environment(hardware="cpu"),
            timestamp="now",
            correctness=Correctness(),
            performance=Performance(latency_ms=latency, reference_latency_ms=2.0)
            if status is EvaluationStatus.PASSED
            else None,
        )
        return Trace(
            definition="bags",
            solution=solution,
            evaluation=evaluation,
            workload=Workload(uuid=workload, axes={}, inputs={}),
        )

    traces = [
        trace("fast", "w1", 1.0),
        trace("fast", "w2", 0.5),
        trace("slow", "w1", 1.9),
        trace("broken", "w1", 0.01, EvaluationStatus.INCORRECT_NUMERICAL),
    ]  # failed: not a speedup
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "traces.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in traces))
    speedups = speedups_from_traces(tmp_path)
    assert speedups["bags"].mean == pytest.approx(math.sqrt(2 * 4)) and speedups["bags"].count == 2
    assert speedups["bags"].log_std == pytest.approx(math.log(2) / math.sqrt(2))
    with pytest.raises(ReachError, match="no \\*.jsonl"):
        speedups_from_traces(tmp_path / "empty")
