"""The reference's outputs are computed the way the candidate runs: at the sandbox's thread count and under the
torch settings a fresh sandbox has, whatever the evaluating process was set to (issue 29's honest solutions)."""

import json
import os
import subprocess
import sys
from dataclasses import replace

import torch

from conftest import write_problem
from solbench.evaluation import evaluate
from solbench.evaluation.confinement import Confinement, SandboxLimits
from solbench.evaluation.torch_settings import TorchSettings, running_as, sandbox_settings
from solbench.runner.jobs import REFERENCE, Job
from solbench.runner.worker import RunSettings, run_job
from solbench.spec.packaging import reference_solution
from solbench.spec.problem import load_problem


def _problem(tmp_path, name: str, expression: str):
    """A problem whose output shows how it ran: `expression` (of torch) is added to the input."""
    definition = {
        "name": name,
        "op_type": "elementwise",
        "axes": {"N": {"type": "var"}},
        "inputs": {"x": {"shape": ["N"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["N"], "dtype": "float32"}},
        "reference": f"import torch\n\ndef run(x):\n    return x + float({expression})\n",
    }
    workloads = [{"uuid": "n64", "axes": {"N": 64}, "inputs": {"x": {"type": "random"}}}]
    return load_problem(write_problem(tmp_path / name, definition, workloads))


def _statuses(traces) -> list[str]:
    return [
        t.evaluation.status.value + (f": {t.evaluation.solbench.failure}" if t.evaluation.solbench else "")
        for t in traces
    ]


def test_the_reference_runs_at_the_thread_count_the_candidate_runs_at(tmp_path, fast_config):
    problem = _problem(tmp_path, "threads_shown", "torch.get_num_threads()")
    before = torch.get_num_threads()
    count = before + 1  # neither this process's count nor, where it is the default, a fresh sandbox's
    traces = evaluate(problem, reference_solution(problem.definition, "cpu"), replace(fast_config, threads=count))
    assert [t.evaluation.status.value for t in traces] == ["PASSED"], _statuses(traces)
    assert torch.get_num_threads() == before  # given back


def test_the_reference_runs_under_the_settings_of_a_fresh_sandbox(tmp_path, fast_config):
    """A library caller's float32 matmul precision is its own: the sandbox has torch's default, so the reference
    is computed at the default too."""
    problem = _problem(tmp_path, "precision_shown", 'torch.get_float32_matmul_precision() == "highest"')
    torch.set_float32_matmul_precision("medium")
    try:
        traces = evaluate(problem, reference_solution(problem.definition, "cpu"), fast_config)
        assert torch.get_float32_matmul_precision() == "medium"  # given back
    finally:
        torch.set_float32_matmul_precision("highest")
    assert [t.evaluation.status.value for t in traces] == ["PASSED"], _statuses(traces)


def test_a_run_worker_evaluates_at_its_share_of_the_cpus(tmp_path, fast_config):
    """`solbench run -j N` gives each worker its share of the CPUs: the candidate's sandbox runs at that share,
    as the reference does in the worker."""
    problem = _problem(tmp_path, "worker_threads_shown", "torch.get_num_threads()")
    before = torch.get_num_threads()
    settings = RunSettings(config=fast_config, out=tmp_path / "run", threads_per_worker=before + 1)
    assert settings.evaluation_config.threads == before + 1
    assert replace(settings, config=replace(fast_config, threads=1)).evaluation_config.threads == 1  # the config's
    try:
        result = run_job(Job(problem.root, problem.name, "tests", REFERENCE), settings)
    finally:
        torch.set_num_threads(before)
    assert result.error is None and result.statuses == {"PASSED": 1}, result


def test_the_sandbox_is_told_the_thread_count_over_the_evaluators_environment(tmp_path, monkeypatch):
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    environment = Confinement("cpu", SandboxLimits(memory_bytes=None, threads=3), tmp_path, "t").environment()
    assert environment["OMP_NUM_THREADS"] == environment["MKL_NUM_THREADS"] == "3"


def test_a_fresh_process_at_a_thread_count_has_the_sandbox_settings():
    """What `sandbox_settings` assumes of a fresh sandbox, checked against a process started as one: torch's
    defaults, and the count its OMP_NUM_THREADS names, above the physical cores too (MKL caps it there)."""
    code = (
        "import dataclasses, json\n"
        "from solbench.evaluation.torch_settings import TorchSettings\n"
        "from solbench.guard.threads import start_runtime_threads\n"
        "start_runtime_threads('cpu')\n"
        "print(json.dumps(dataclasses.asdict(TorchSettings.current())))\n"
    )
    count = (os.cpu_count() or 1) + 1
    environment = {**os.environ, "OMP_NUM_THREADS": str(count), "MKL_NUM_THREADS": str(count)}
    output = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True)
    assert TorchSettings(**json.loads(output.stdout)) == sandbox_settings(count)


def test_settings_are_given_back_after_an_error():
    before = TorchSettings.current()
    try:
        with running_as(replace(sandbox_settings(before.threads + 1), float32_matmul_precision="high")):
            assert torch.get_num_threads() == before.threads + 1
            assert torch.get_float32_matmul_precision() == "high"
            raise KeyError("the reference failed")
    except KeyError:
        pass
    assert TorchSettings.current() == before
