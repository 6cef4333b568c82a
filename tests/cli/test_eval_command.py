"""The `solbench eval` contract other tools depend on, through real processes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import solution_dict, write_problem

FAST = ["--budget", "0.05", "--rounds", "2"]
ROOT = Path(__file__).resolve().parents[2]


def solbench(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def solution_file(tmp_path):
    path = tmp_path / "solution.json"
    path.write_text(json.dumps(solution_dict("import torch\ndef run(x, y):\n    return x + y\n")))
    return path


@pytest.mark.slow
def test_json_output_is_only_a_json_array_and_o_appends(vector_add_problem, solution_file, tmp_path):
    traces_file = tmp_path / "traces.jsonl"
    for _ in range(2):
        result = solbench("eval", vector_add_problem, "--solution", solution_file, "--json", "-o", traces_file, *FAST)
        assert result.returncode == 0, result.stderr
        traces = json.loads(result.stdout)
        assert [t["evaluation"]["status"] for t in traces] == ["PASSED", "PASSED"]
        assert [t["workload"]["uuid"] for t in traces] == ["n1000", "n4099"]
    lines = traces_file.read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(line)["solution"] == "candidate" for line in lines)


@pytest.mark.slow
def test_failing_solution_still_exits_zero(vector_add_problem, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(solution_dict("def run(x, y):\n    raise ValueError('no')\n")))
    result = solbench("eval", vector_add_problem, "--solution", path, "--json", *FAST)
    assert result.returncode == 0
    assert {t["evaluation"]["status"] for t in json.loads(result.stdout)} == {"RUNTIME_ERROR"}


@pytest.mark.slow
def test_table_output(vector_add_problem, solution_file):
    result = solbench("eval", vector_add_problem, "--solution", solution_file, *FAST)
    assert result.returncode == 0, result.stderr
    assert "PASSED" in result.stdout and "2 PASSED" in result.stdout


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["eval", "{problem}", "--solution", "{missing}"], "nope.json: file not found"),
        (["eval", "{nowhere}", "--reference"], "not a problem directory"),
        (["eval", "{problem}"], "give exactly one of --solution FILE or --reference"),
        (["eval", "{problem}", "--reference", "--timeout", "0"], "--timeout 0.0: must be positive"),
        (["eval", "{problem}", "--reference", "--rounds", "0"], "--rounds 0: must be positive"),
        (["eval", "{problem}", "--reference", "--budget", "-1"], "--budget -1.0: must not be negative"),
        (["eval", "{problem}", "--reference", "--bogus"], "No such option"),
        (["eval", "{problem}", "--solution", "{broken}"], "broken.json:1: invalid JSON"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(vector_add_problem, tmp_path, arguments, message):
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    values = {
        "problem": vector_add_problem,
        "missing": tmp_path / "nope.json",
        "nowhere": tmp_path / "nowhere",
        "broken": broken,
    }
    result = solbench(*[a.format(**values) for a in arguments])
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.slow
def test_a_bad_harness_option_is_one_line_exit_2_and_no_trace(tmp_path):
    """Checked before any sandbox starts: not four RUNTIME_ERROR traces whose log is the harness's traceback."""
    traces_file = tmp_path / "traces.jsonl"
    result = solbench("eval", ROOT / "examples" / "rmsnorm", "--reference", "--timer", "cuda_foo", "-o", traces_file)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "solbench: error: --timer cuda_foo: unknown timer (known: cpu_monotonic, cuda_events, cuda_profiler)"
    ]
    assert result.stdout == "" and not traces_file.exists()


def test_help_does_not_import_torch():
    code = "import sys; from solbench.cli.app import app; assert 'torch' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    assert solbench("--help").returncode == 0


RMSNORM_CUSTOM = {
    "name": "rmsnorm_custom",
    "axes": {"B": {"type": "var"}, "H": {"type": "const", "value": 64}},
    "custom_inputs_entrypoint": "make_inputs",
    "inputs": {
        "x": {"shape": ["B", "H"], "dtype": "float32"},
        "weight": {"shape": ["H"], "dtype": "float32"},
        "eps": {"shape": None, "dtype": "float32"},
    },
    "outputs": {"y": {"shape": ["B", "H"], "dtype": "float32"}},
    "reference": "import torch\n\ndef make_inputs(axes_and_scalars, device):\n"
    "    x = torch.randn(axes_and_scalars['B'], axes_and_scalars['H'], device=device)\n"
    "    return {'x': x, 'weight': 1 + torch.rand(axes_and_scalars['H'], device=device)}\n\n"
    "def run(x, weight, eps):\n"
    "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight\n",
}


@pytest.mark.slow
def test_custom_tensors_with_a_scalar_eps_pass_and_get_t_sol(tmp_path):
    """Custom inputs may sit beside scalar ones in a workload: the entrypoint makes x and weight, eps is given."""
    inputs = {"x": {"type": "custom"}, "weight": {"type": "custom"}, "eps": {"type": "scalar", "value": 1e-6}}
    problem = write_problem(
        tmp_path / "rmsnorm_custom",
        RMSNORM_CUSTOM,
        [{"uuid": f"b{b}", "axes": {"B": b}, "inputs": inputs} for b in (3, 16)],
    )
    result = solbench("eval", problem, "--reference", "--json", *FAST)
    assert result.returncode == 0, result.stderr
    assert [t["evaluation"]["status"] for t in json.loads(result.stdout)] == ["PASSED", "PASSED"]
    sol = solbench("sol", problem, "--hardware", "H200", "--json")
    assert sol.returncode == 0, sol.stderr
    rows = json.loads(sol.stdout)
    assert [r["workload"]["uuid"] for r in rows] == ["b3", "b16"]
    # read x and weight, write y, all fp32
    assert rows[1]["bytes"] == (16 * 64 * 2 + 64) * 4 and rows[1]["bound"] == "memory" and rows[1]["t_sol_ms"] > 0
