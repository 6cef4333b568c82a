"""Loop shortcuts (sol/loops.py) change how many iterations the analyzer runs, never what it finds.

Each reference is analysed twice, with shortcuts and with them turned off, and the two results must
be identical field for field (T_SOL, FLOPs per class, compulsory bytes, coverage, every op's row).
The count of ATen calls the recorder actually saw tells whether the shortcut applied: where it must
refuse (a list that grows, a Python number carried out of the loop, a `break`, rows picked by the loop
variable, real index values, hidden state that makes the last iteration differ), every iteration runs.
"""

import textwrap

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import analysis, analyze_problem, loops
from solbench.sol.loops import with_loop_shortcuts
from solbench.sol.recorder import OpRecorder
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis

STEPS = 12
AXES = {"b": {"type": "const", "value": 4}, "n": {"type": "var"}, "d": {"type": "const", "value": 64}}
SEQUENCE_INPUTS = {
    "k": {"shape": ["b", "n", "d"], "dtype": "float32"},
    "v": {"shape": ["b", "n", "d"], "dtype": "float32"},
    "s0": {"shape": ["b", "d"], "dtype": "float32"},
}

RECURRENCE = """
import torch

def run(k, v, s0):
    s = s0.clone()
    out = torch.zeros_like(k)
    for t in range(k.shape[1]):
        decay = torch.exp(-s)
        s = decay * s + k[:, t] * v[:, t]
        out[:, t] = torch.tanh(s)
    return out, s
"""

GROWING_LIST = """
import torch

def run(k, v, s0):
    outs = []
    for t in range(k.shape[1]):
        outs.append(k[:, t] * v[:, t])
    return torch.stack(outs, 1), s0 * 2
"""

PYTHON_COUNTER = """
import torch

def run(k, v, s0):
    total = 0
    s = s0
    for t in range(k.shape[1]):
        s = s + k[:, t]
        total += 1
    return s, v[:, :total] * 2
"""

BREAK = """
import torch

def run(k, v, s0):
    s = s0
    for t in range(k.shape[1]):
        s = s * k[:, t]
        if s.shape[0] > 2:
            break
    return s, v * 2
"""

ROWS_BY_STEP = {  # x[t] reads row t of x: which rows are read depends on the loop variable
    "axes": {"n": {"type": "var"}, "d": {"type": "const", "value": 64}},
    "inputs": {"x": {"shape": ["n", "d"], "dtype": "float32"}},
    "outputs": {"s": {"shape": ["d"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(x):\n    s = torch.zeros(x.shape[1])\n    for t in range(x.shape[0] // 2):\n"
    "        s = s + x[t]\n    return s\n",
}

HIDDEN_IN_A_DEFAULT = """
import torch

def step(s, x, seen=[]):
    seen.append(1)
    if len(seen) == CALL:  # state in a default argument: the CALL-th call does more work
        s = s * 2
    return s + x

def run(k, v, s0):
    s = s0
    for t in range(k.shape[1]):
        s = step(s, k[:, t])
    return s, v * 2
"""

HIDDEN_IN_ANOTHER_MODULE = """
import math
import torch

def step(s, x):
    math._solbench_test_calls += 1  # state no fingerprint sees: the third call does more work
    if math._solbench_test_calls == 3:
        s = s * 2
    return s + x

def run(k, v, s0):
    math._solbench_test_calls = 0
    s = s0
    for t in range(k.shape[1]):
        s = step(s, k[:, t])
    return s, v * 2
"""

RECURRENCE_UNDER_AUTOGRAD = """
import torch

def run(k, v, s0):
    with torch.enable_grad():
        start = s0.detach().requires_grad_()
        s = start
        for t in range(k.shape[1]):
            s = torch.tanh(s * k[:, t] + v[:, t])
        (grad,) = torch.autograd.grad(s.sum(), start)
    return s.detach(), grad
"""

GATHER_BY_REAL_INDEX = {
    "axes": {"n": {"type": "var"}, "m": {"type": "const", "value": 8}, "d": {"type": "const", "value": 32}},
    "custom_inputs_entrypoint": "get_inputs",
    "inputs": {"x": {"shape": ["n", "d"], "dtype": "float32"}, "idx": {"shape": ["m"], "dtype": "int64"}},
    "outputs": {"y": {"shape": ["d"], "dtype": "float32"}},
    "reference": textwrap.dedent("""
        import torch

        def get_inputs(axes, device):
            n = axes['n']
            return {'x': torch.randn(n, axes['d'], device=device), 'idx': torch.randint(0, n // 2, (axes['m'],))}

        def run(x, idx):
            acc = torch.zeros(x.shape[1])
            for t in range(idx.shape[0]):
                acc = acc + x[idx[t]]
            return acc
        """),
}


def _sequence_definition(name: str, reference: str) -> dict:
    return {
        "name": name,
        "axes": AXES,
        "inputs": SEQUENCE_INPUTS,
        "outputs": {
            "out": {"shape": ["b", "n", "d"], "dtype": "float32"},
            "s": {"shape": ["b", "d"], "dtype": "float32"},
        },
        "reference": textwrap.dedent(reference),
    }


def _analyse(tmp_path, definition: dict, monkeypatch, *, shortcuts: bool):
    """The results (as JSON) and the ATen calls the recorder saw."""
    names = list(definition["inputs"])
    kind = "custom" if "custom_inputs_entrypoint" in definition else "random"
    workload = {
        "uuid": "w",
        "axes": {"n": 64 if kind == "custom" else STEPS},
        "inputs": {name: {"type": kind} for name in names},
    }
    folder = write_problem(tmp_path / f"{definition['name']}_{shortcuts}", definition, [workload])
    seen = []
    record = OpRecorder._record

    def counting(self, *args):
        seen.append(1)
        return record(self, *args)

    with monkeypatch.context() as patch:
        patch.setattr(OpRecorder, "_record", counting)
        # a cache folder per configuration: the other's recording plan (sol/plan_cache.py) would skip stages
        patch.setenv("SOLBENCH_CACHE_DIR", str(tmp_path / f"cache_{shortcuts}"))
        if not shortcuts:
            patch.setattr(analysis, "_with_loop_shortcuts", lambda definition, folders: None)
        results = analyze_problem(
            load_problem(folder),
            lookup("B200_1500MHz"),
            explain=True,
            make_inputs=inputs_for_analysis,
            precision="strict",
        )
    return [r.model_dump(mode="json") for r in results], len(seen)


def _compare(tmp_path, definition, monkeypatch):
    plain, plain_calls = _analyse(tmp_path, definition, monkeypatch, shortcuts=False)
    fast, fast_calls = _analyse(tmp_path, definition, monkeypatch, shortcuts=True)
    assert fast == plain
    assert fast[0]["coverage"]["aten_calls"] == plain[0]["coverage"]["aten_calls"]
    return plain_calls, fast_calls


def test_a_recurrence_is_recorded_a_few_times_and_gives_the_full_run_figures(tmp_path, monkeypatch):
    plain_calls, fast_calls = _compare(tmp_path, _sequence_definition("recurrence", RECURRENCE), monkeypatch)
    per_step = 7  # exp, neg, mul, select x2, mul, add, select, tanh, copy_: at least 7 recorded per step
    assert plain_calls >= STEPS * per_step
    assert fast_calls <= plain_calls - (STEPS - 4) * per_step  # only 3 of the 12 iterations ran (and setup)


def test_a_recurrence_in_a_run_decorated_by_torch_no_grad_is_shortcut_too(tmp_path, monkeypatch):
    # upstream's references decorate `run` with `@torch.no_grad()`: the wrapper's closure (the decorator's
    # machinery) is not reference state, the wrapped function's is
    reference = RECURRENCE.replace("def run(", "@torch.no_grad()\ndef run(")
    plain_calls, fast_calls = _compare(tmp_path, _sequence_definition("decorated", reference), monkeypatch)
    assert fast_calls <= plain_calls - (STEPS - 4) * 7


@pytest.mark.parametrize("name,reference", [("growing_list", GROWING_LIST), ("python_counter", PYTHON_COUNTER)])
def test_a_loop_whose_state_does_not_settle_runs_in_full(tmp_path, monkeypatch, name, reference):
    plain_calls, fast_calls = _compare(tmp_path, _sequence_definition(name, reference), monkeypatch)
    assert fast_calls == plain_calls


def test_rows_picked_by_the_loop_variable_refuse_the_shortcut(tmp_path, monkeypatch):
    plain_calls, fast_calls = _compare(tmp_path, {"name": "rows_by_step", **ROWS_BY_STEP}, monkeypatch)
    assert fast_calls == plain_calls


def test_a_loop_with_break_is_left_as_it_is(tmp_path, monkeypatch):
    assert with_loop_shortcuts(textwrap.dedent(BREAK)) is None
    plain_calls, fast_calls = _compare(tmp_path, _sequence_definition("with_break", BREAK), monkeypatch)
    assert fast_calls == plain_calls


@pytest.mark.parametrize("call", [3, 5])
def test_state_in_a_default_argument_is_compared_so_the_loop_runs_in_full(tmp_path, monkeypatch, call):
    # call 3 is the iteration the shortcut reruns last, call 5 one it would skip: both are seen as unsettled state
    reference = HIDDEN_IN_A_DEFAULT.replace("CALL", str(call))
    plain_calls, fast_calls = _compare(tmp_path, _sequence_definition(f"default_{call}", reference), monkeypatch)
    assert fast_calls == plain_calls


def test_hidden_state_that_changes_the_last_iteration_falls_back_to_a_full_run(tmp_path, monkeypatch):
    definition = _sequence_definition("hidden", HIDDEN_IN_ANOTHER_MODULE)
    plain_calls, fast_calls = _compare(tmp_path, definition, monkeypatch)
    # The shortcut ran 3 iterations, saw the last one differ, and the plain reference ran in full afterwards.
    assert fast_calls > plain_calls


def test_a_loop_under_autograd_runs_in_full_so_backward_sees_every_iteration(tmp_path, monkeypatch):
    definition = _sequence_definition("autograd", RECURRENCE_UNDER_AUTOGRAD)
    definition["outputs"] = {
        "s": {"shape": ["b", "d"], "dtype": "float32"},
        "grad": {"shape": ["b", "d"], "dtype": "float32"},
    }
    plain_calls, fast_calls = _compare(tmp_path, definition, monkeypatch)
    assert fast_calls == plain_calls


def test_a_state_that_never_settles_is_compared_a_bounded_number_of_times(tmp_path, monkeypatch):
    compared, loop_runs = [], []
    fingerprint, iterate = loops._fingerprint, loops.Loop._iterate

    def counting(*args):
        compared.append(1)
        return fingerprint(*args)

    def counting_runs(self, recorder):
        loop_runs.append(1)
        return iterate(self, recorder)

    monkeypatch.setattr(loops, "_fingerprint", counting)
    monkeypatch.setattr(loops.Loop, "_iterate", counting_runs)
    _analyse(tmp_path, _sequence_definition("growing", GROWING_LIST), monkeypatch, shortcuts=True)
    assert loops.MAX_PROBES + 1 < STEPS + 1  # uncapped, each run of the loop would compare STEPS + 1 states
    assert loop_runs and 0 < len(compared) <= len(loop_runs) * (loops.MAX_PROBES + 1)


def test_real_index_values_picked_by_the_loop_variable_refuse_the_shortcut(tmp_path, monkeypatch):
    definition = {"name": "gather", **GATHER_BY_REAL_INDEX}
    plain_calls, fast_calls = _compare(tmp_path, definition, monkeypatch)
    assert fast_calls == plain_calls


@pytest.mark.parametrize(
    "body",
    [
        "x = x + a[t + 1]",
        "x = x + a[t:t + 2].sum()",
        "x = f(t)",
        "for j in range(t):\n        x = x + 1",
        "t = 3",
        "return x",
        "try:\n        x = a[t]\n    except IndexError:\n        pass",
    ],
)
def test_a_loop_variable_used_other_than_as_a_plain_index_is_not_rewritten(body):
    source = f"def run(a, x):\n    for t in range(4):\n        {body}\n    return x\n"
    rewritten = with_loop_shortcuts(source) or ""
    assert "_solbench_loops.Loop(" not in rewritten  # a routed loop (sol/routed.py) may still take a straight-line body


def test_eligible_loops_iterate_through_a_loop_helper_and_index_through_its_guard():
    source = (
        "from __future__ import annotations\n"
        "def run(a, x):\n    for t in range(4):\n        x = x + a[:, t]\n        a[t] = x\n    return x\n"
    )
    rewritten = with_loop_shortcuts(source)
    assert rewritten.startswith("from __future__ import annotations\nimport solbench.sol.loops as _solbench_loops\n")
    assert "_solbench_loop_0 = _solbench_loops.Loop(range(4), 't')" in rewritten
    assert "_solbench_loop_0.tensor(a)[:, t]" in rewritten and "_solbench_loop_0.tensor(a)[t] = x" in rewritten


def test_without_a_recorder_the_rewritten_loop_is_the_plain_loop():
    namespace = {}
    exec(
        with_loop_shortcuts(
            "def run(a):\n    out = []\n    for t in range(5):\n        out.append(a[t])\n    return out\n"
        ),
        namespace,
    )
    assert namespace["run"]([10, 11, 12, 13, 14]) == [10, 11, 12, 13, 14]


def test_the_sample_time_step_recurrence_is_shortcut(monkeypatch):
    """SOL-ExecBench's L1/094 (an RWKV recurrence over 2k steps, `run` under `@torch.no_grad()`): the recorder
    sees a small share of the ATen calls the recording holds. Skipped where ../shared is absent."""
    import dataclasses
    from pathlib import Path

    sample = Path(__file__).resolve().parents[3] / "shared" / "sol-execbench-sample"
    folder = sample / "L1" / "094_time_decay_exponential_stabilization"
    if not folder.is_dir():
        pytest.skip(f"{folder} is not present")
    problem = load_problem(folder)
    problem = dataclasses.replace(problem, workloads=problem.workloads[:1], workload_tiers=problem.workload_tiers[:1])
    seen = []
    record = OpRecorder._record
    monkeypatch.setattr(OpRecorder, "_record", lambda self, *args: seen.append(1) or record(self, *args))
    [result] = analyze_problem(problem, lookup("B200_1500MHz"), make_inputs=inputs_for_analysis)
    assert result.coverage.full and result.coverage.aten_calls > 10_000
    assert len(seen) < result.coverage.aten_calls / 20
