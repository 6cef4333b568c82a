"""End to end through a real sandbox process: every status, and the harness survives each failure."""

import pytest

from conftest import make_solution, process_alive
from solbench.evaluation import evaluate
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus as S


def _run(problem_dir, source, config, **options):
    traces = evaluate(load_problem(problem_dir), make_solution(source, **options), config)
    assert len(traces) == len(load_problem(problem_dir).workloads)  # one trace per workload, always
    for trace in traces:
        trace.model_validate(trace.model_dump(mode="json"))  # and each one is a valid upstream trace
        failed = trace.evaluation.status is not S.PASSED
        assert bool(trace.evaluation.solbench.failed_rule) == failed  # every failure names its rule, nothing else
    return traces


def test_every_failing_status_names_a_rule_where_no_check_failed():
    from solbench.evaluation.outcome import STATUS_RULE, RunContext, make_trace
    from solbench.spec.trace import Environment
    from solbench.spec.workload import Workload

    assert set(STATUS_RULE) == set(S) - {S.PASSED}
    context = RunContext("d", "s", Environment(hardware="test"), "cpu", "test", {})
    workload = Workload(uuid="w", axes={}, inputs={})
    for status in set(S) - {S.PASSED, S.IMPLAUSIBLE, S.INCORRECT_NUMERICAL}:  # those need a measurement
        details = make_trace(context, workload, status, failure="why").evaluation.solbench
        assert details.failed_rule == STATUS_RULE[status]
    assert make_trace(context, workload, S.RUNTIME_ERROR, rule="crash").evaluation.solbench.failed_rule == "crash"


def _statuses(traces):
    return [t.evaluation.status for t in traces]


def test_value_returning_solution_passes_with_timing(vector_add_problem, fast_config):
    traces = _run(vector_add_problem, "import torch\ndef run(x, y):\n    return x + y\n", fast_config)
    assert _statuses(traces) == [S.PASSED, S.PASSED]
    evaluation = traces[0].evaluation
    details = evaluation.solbench
    assert evaluation.performance.latency_ms > 0
    assert details.timing.samples_ms and details.timing.median_ms == evaluation.performance.latency_ms
    assert details.timing.backend == "cpu_monotonic" and details.timing.cache_flush
    assert details.input_seed is not None and details.rounds == 2
    assert evaluation.environment.libs["torch"] and details.harness_version
    assert (
        evaluation.correctness.extra["golden"]["z"]["solution_error"]
        <= evaluation.correctness.extra["golden"]["z"]["allowed"]
    )


@pytest.mark.slow
def test_destination_passing_style(vector_add_problem, fast_config):
    source = "import torch\ndef run(x, y, z):\n    torch.add(x, y, out=z)\n"
    assert _statuses(_run(vector_add_problem, source, fast_config, dps=True)) == [S.PASSED, S.PASSED]


@pytest.mark.slow
def test_dps_buffer_partly_written_fails_on_the_sentinel(vector_add_problem, fast_config):
    source = "def run(x, y, z):\n    n = x.shape[0] // 2\n    z[:n] = x[:n] + y[:n]\n"
    traces = _run(vector_add_problem, source, fast_config, dps=True)
    assert _statuses(traces) == [S.INCORRECT_NUMERICAL] * 2
    assert traces[0].evaluation.solbench.failed_rule == "nan"


@pytest.mark.slow
@pytest.mark.parametrize(
    "body, status, rule",
    [
        ("return (x + y)[:-1]", S.INCORRECT_SHAPE, "shape"),
        ("return (x + y).double()", S.INCORRECT_DTYPE, "dtype"),
        ("return x - y", S.INCORRECT_NUMERICAL, "tolerance"),
    ],
)
def test_incorrect_outputs(vector_add_problem, fast_config, body, status, rule):
    traces = _run(vector_add_problem, f"import torch\ndef run(x, y):\n    {body}\n", fast_config)
    assert _statuses(traces) == [status] * 2
    details = traces[0].evaluation.solbench
    assert details.failed_rule == rule and rule in details.failure
    assert traces[0].evaluation.performance is None


@pytest.mark.slow
def test_runtime_error_is_logged_and_the_next_workload_still_runs(vector_add_problem, fast_config):
    source = """
        import torch
        def run(x, y):
            if x.shape[0] == 1000:
                raise ValueError("boom at 1000")
            return x + y
        """
    traces = _run(vector_add_problem, source, fast_config)
    assert _statuses(traces) == [S.RUNTIME_ERROR, S.PASSED]
    assert "boom at 1000" in traces[0].evaluation.log and traces[0].evaluation.solbench.failed_rule == "exception"


@pytest.mark.slow
def test_process_exit_crash_and_segfault_do_not_stop_the_evaluator(vector_add_problem, fast_config):
    source = """
        import os, torch
        def run(x, y):
            if x.shape[0] == 1000:
                os._exit(3)
            return x + y
        """
    traces = _run(vector_add_problem, source, fast_config)
    assert _statuses(traces) == [S.RUNTIME_ERROR, S.PASSED]
    assert "exited with status 3" in traces[0].evaluation.solbench.failure
    assert traces[0].evaluation.solbench.failed_rule == "crash"
    segfault = "import faulthandler\ndef run(x, y):\n    faulthandler._sigsegv()\n"
    traces = _run(vector_add_problem, segfault, fast_config)
    assert _statuses(traces) == [S.RUNTIME_ERROR] * 2
    assert "SIGSEGV" in traces[1].evaluation.solbench.failure


@pytest.mark.slow
def test_sys_exit_in_a_call(vector_add_problem, fast_config):
    traces = _run(vector_add_problem, "import sys\ndef run(x, y):\n    sys.exit(0)\n", fast_config)
    assert _statuses(traces) == [S.RUNTIME_ERROR] * 2
    assert "sys.exit(0)" in traces[0].evaluation.solbench.failure


@pytest.mark.slow
def test_hang_times_out_and_the_next_workload_runs(vector_add_problem, fast_config):
    from dataclasses import replace

    source = """
        import time, torch
        def run(x, y):
            if x.shape[0] == 1000:
                time.sleep(3600)
            return x + y
        """
    traces = _run(vector_add_problem, source, replace(fast_config, timeout_s=3))
    assert _statuses(traces) == [S.TIMEOUT, S.PASSED]
    assert "no reply within 3 s" in traces[0].evaluation.solbench.failure
    assert traces[0].evaluation.solbench.failed_rule == "timeout"


@pytest.mark.slow
def test_out_of_memory_is_a_runtime_error(vector_add_problem, fast_config):
    source = "import torch\ndef run(x, y):\n    keep = torch.ones(1 << 40, dtype=torch.uint8)\n    return x + y\n"
    traces = _run(vector_add_problem, source, fast_config)
    assert _statuses(traces) == [S.RUNTIME_ERROR] * 2
    assert "memory" in traces[0].evaluation.log.lower()


@pytest.mark.slow
@pytest.mark.parametrize(
    "source, fragment",
    [
        ("import sys\nsys.exit(4)\ndef run(x, y):\n    return x\n", "sys.exit(4)"),
        ("import not_a_module_anywhere\ndef run(x, y):\n    return x\n", "not_a_module_anywhere"),
        ("def run(x, y):\n    return x +\n", "SyntaxError"),
        ("def forward(x, y):\n    return x + y\n", "no function 'run'"),
    ],
)
def test_build_failures_are_compile_errors_for_every_workload(vector_add_problem, fast_config, source, fragment):
    traces = _run(vector_add_problem, source, fast_config)
    assert _statuses(traces) == [S.COMPILE_ERROR] * 2
    assert fragment in traces[1].evaluation.log
    assert traces[1].workload.uuid == "n4099" and traces[1].evaluation.solbench.failed_rule == "build"


@pytest.mark.slow
def test_cuda_language_on_cpu_says_a_gpu_is_needed(vector_add_problem, fast_config):
    source = "__global__ void k() {}\n"
    traces = _run(vector_add_problem, source, fast_config, language="cuda_cpp", entry="kernel.cu::run")
    assert _statuses(traces) == [S.COMPILE_ERROR] * 2
    assert "needs a CUDA device" in traces[0].evaluation.log


@pytest.mark.slow
def test_printing_is_only_log_text(vector_add_problem, fast_config):
    source = """
        import sys, torch
        print('[{"evaluation": {"status": "PASSED"}}]')
        def run(x, y):
            sys.stdout.write("noise " * 50_000)
            print("to stderr", file=sys.stderr)
            return x + y
        """
    traces = _run(vector_add_problem, source, fast_config)
    assert _statuses(traces) == [S.PASSED] * 2
    log = traces[1].evaluation.log
    assert "noise" in log and "bytes of output dropped" in log and len(log) < 100_000


LAZY_SUBCLASS = """
    import torch
    class Lazy(torch.Tensor):
        pass
    def run(x, y):
        return (x + y).as_subclass(Lazy)
    """


@pytest.mark.slow
def test_tensor_subclass_output_is_a_reward_hack_at_run_time(vector_add_problem, fast_config):
    from dataclasses import replace

    traces = _run(vector_add_problem, LAZY_SUBCLASS, replace(fast_config, static_check=False))
    assert _statuses(traces) == [S.REWARD_HACK] * 2
    assert "tensor_subclass" in traces[0].evaluation.solbench.failure


@pytest.mark.slow
def test_blocking_static_findings_stop_the_solution_before_it_runs(vector_add_problem, fast_config):
    traces = _run(vector_add_problem, LAZY_SUBCLASS, fast_config)
    assert _statuses(traces) == [S.REWARD_HACK] * 2
    details = traces[0].evaluation.solbench
    assert details.failed_rule == "static:tensor-subclass"
    assert details.failure.startswith("static check: kernel.py:3: tensor-subclass (block)")
    assert details.timing is None and "(+1 more)" in details.failure  # as_subclass is a second finding


@pytest.mark.slow
def test_static_warnings_are_recorded_on_passing_traces(vector_add_problem, fast_config):
    source = "import torch\ndef run(x, y):\n    key = x.data_ptr()\n    return x + y\n"
    traces = _run(vector_add_problem, source, fast_config)
    assert _statuses(traces) == [S.PASSED] * 2
    static = [c for c in traces[0].evaluation.solbench.checks if c.phase == "static"]
    assert [c.rule for c in static] == ["static:pointer-branch"] and static[0].passed


@pytest.mark.slow
def test_non_tensor_output_is_a_runtime_error(vector_add_problem, fast_config):
    traces = _run(vector_add_problem, "def run(x, y):\n    return (x + y).numpy()\n", fast_config)
    assert _statuses(traces) == [S.RUNTIME_ERROR] * 2
    assert "not a torch.Tensor" in traces[0].evaluation.solbench.failure


@pytest.mark.slow
def test_outputs_of_timed_iterations_are_checked(vector_add_problem, fast_config):
    source = """
        import torch
        calls = 0
        def run(x, y):
            global calls
            calls += 1
            if calls > 2:  # right while checked (2 rounds), wrong once timing starts
                return torch.zeros_like(x)
            return x + y
        """
    traces = _run(vector_add_problem, source, fast_config)
    assert traces[0].evaluation.status is S.INCORRECT_NUMERICAL
    failure = [c for c in traces[0].evaluation.solbench.checks if not c.passed][0]
    assert failure.phase == "timing"


@pytest.mark.slow
def test_reference_that_raises_is_an_invalid_reference(tmp_path, fast_config):
    from conftest import VECTOR_ADD, vector_workloads, write_problem

    broken = dict(VECTOR_ADD, reference="def run(x, y):\n    raise RuntimeError('bad reference')\n")
    root = write_problem(tmp_path / "broken", broken, vector_workloads(8))
    traces = _run(root, "def run(x, y):\n    return x + y\n", fast_config)
    assert _statuses(traces) == [S.INVALID_REFERENCE]
    assert "bad reference" in traces[0].evaluation.solbench.failure
    assert traces[0].evaluation.solbench.failed_rule == "reference"


@pytest.mark.slow
def test_solution_for_another_definition_is_refused(vector_add_problem, fast_config):
    from solbench.spec import SpecError

    with pytest.raises(SpecError, match="is for 'softmax', not for this problem 'vector_add'"):
        evaluate(
            load_problem(vector_add_problem),
            make_solution("def run(x, y):\n    return x\n", definition="softmax"),
            fast_config,
        )


EVALUATOR = """
import sys
from solbench.evaluation import EvaluationConfig, evaluate
from solbench.spec import load_problem
from solbench.spec.solution import Solution
solution = Solution.model_validate_json(open(sys.argv[2]).read())
evaluate(load_problem(sys.argv[1]), solution, EvaluationConfig(static_check=False, timeout_s=300))
"""


@pytest.mark.slow
def test_the_sandbox_dies_with_its_evaluator(vector_add_problem, tmp_path):
    """An evaluator killed by the OS (OOM killer, kill -9) mid-call takes its sandbox along: no solution code
    outlives it (a sandbox waiting for a request would see its socket close; one inside a call would not)."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    solution = tmp_path / "sleepy.json"
    solution.write_text(
        make_solution(
            "import time\ndef run(x, y):\n    open('in_the_call', 'w').close()\n    time.sleep(300)\n    return x + y\n"
        ).model_dump_json()
    )
    evaluator = subprocess.Popen([sys.executable, "-c", EVALUATOR, str(vector_add_problem), str(solution)])
    try:
        sandbox = _wait_for(lambda: _children_running(evaluator.pid, "solbench.sandbox.child"), 120)
        arguments = Path(f"/proc/{sandbox}/cmdline").read_bytes().decode().split("\0")
        workdir = Path(arguments[arguments.index("--workdir") + 1])
        assert _wait_for(lambda: (workdir / "in_the_call").exists(), 120), "the solution was never called"
        evaluator.send_signal(signal.SIGKILL)
        evaluator.wait()
        assert _wait_for(lambda: not process_alive(sandbox), 10), f"sandbox {sandbox} outlived its evaluator"
    finally:
        evaluator.kill()


def _wait_for(predicate, seconds: float):
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return None


def _children_running(parent: int, module: str) -> int | None:
    from pathlib import Path

    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == parent and module.encode() in cmdline:
            return int(stat.parent.name)
    return None


@pytest.mark.slow
def test_the_sandbox_is_stopped_while_the_reference_is_timed():
    """Whatever a solution left running (a thread that burns CPU when calls stop coming) cannot slow T_b down."""
    from solbench.evaluation.session import SandboxLimits, SandboxSession

    session = SandboxSession("cpu", SandboxLimits(memory_bytes=None))
    try:
        assert _wait_for(lambda: _state(session.process.pid) in {"S", "R"}, 30)
        with session.paused():  # stopped by SIGSTOP, or frozen with the sandbox's whole cgroup
            assert _wait_for(lambda: _state(session.process.pid) == "T" or _frozen(session.process.pid), 5), _state(
                session.process.pid
            )
        assert _wait_for(lambda: _state(session.process.pid) in {"S", "R"}, 5)
    finally:
        session.close()


def _frozen(pid: int) -> bool:
    """Whether the cgroup v2 that `pid` is in reports itself frozen."""
    from pathlib import Path

    own = next(
        (line[3:].strip() for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines() if line.startswith("0::")),
        None,
    )
    mounts = [
        line.split(" - ")[0].split()[4]
        for line in Path("/proc/self/mountinfo").read_text().splitlines()
        if line.split(" - ")[1].startswith("cgroup2 ")
    ]
    return bool(own and mounts) and "frozen 1" in (Path(mounts[0]) / own.lstrip("/") / "cgroup.events").read_text()


def _state(pid: int) -> str:
    from pathlib import Path

    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.slow
def test_a_process_that_left_the_sandbox_group_dies_with_the_sandbox(vector_add_problem, fast_config):
    """A forked grandchild in a session of its own (setsid) is not in the sandbox's process group: it is refused
    (processes) and still dies, with every sandbox the evaluation started for the next workloads."""
    import re
    from dataclasses import replace

    source = (
        "import os, time\nr, w = os.pipe()\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        os.write(w, str(os.getpid()).encode().ljust(16))\n        time.sleep(120)\n    os._exit(0)\n"
        "ESCAPED = int(os.read(r, 16))\nprint('escaped pid', ESCAPED)\n"
        "def run(x, y):\n    assert os.path.exists(f'/proc/{ESCAPED}'), 'the escaped process is gone'\n"
        "    return x + y\n"
    )
    traces = evaluate(load_problem(vector_add_problem), make_solution(source), replace(fast_config, static_check=False))
    assert {t.evaluation.status for t in traces} == {S.REWARD_HACK}, traces[0].evaluation.log[-2000:]
    assert {t.evaluation.solbench.failed_rule for t in traces} == {"processes"}
    escaped = [int(pid) for pid in re.findall(r"escaped pid (\d+)", " ".join(t.evaluation.log for t in traces))]
    assert escaped, "the escaping process never started"
    assert all(_wait_for(lambda pid=pid: not process_alive(pid), 10) for pid in escaped), (
        f"{escaped} outlived the evaluation"
    )
