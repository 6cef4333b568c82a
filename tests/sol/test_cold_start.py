"""A fresh process's `solbench sol` pays no torch._dynamo import (about a second) for references that analyse on
meta tensors, attention among them (sol/composites.py), and hands torch's compile guards back afterwards
(sol/dynamo_deferral.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import VECTOR_ADD, vector_workloads, write_problem

GUARDED_OPS = {  # meta kernels that are torch._refs behind torch._disable_dynamo: each imports torch._dynamo
    **VECTOR_ADD,
    "reference": "import torch\n\ndef run(x, y):\n    s = torch.cumsum(x, 0)\n"
    "    return (s.masked_fill(y > 0, 0.0) + torch.tril(y.view(1, -1)).view(-1))\n",
}

ATTENTION = {  # on meta tensors as the CPU would run it, where fake tensors (which import torch._dynamo) used to
    "name": "attention",
    "axes": {"N": {"type": "var"}},
    "inputs": {"q": {"shape": [1, 4, "N", 64], "dtype": "bfloat16"}},
    "outputs": {"o": {"shape": [1, 4, "N", 64], "dtype": "bfloat16"}},
    "reference": "import torch\nimport torch.nn.functional as F\n\n"
    "def run(q):\n    return F.scaled_dot_product_attention(q, q, q, is_causal=True)\n",
}

ATTENTION_WORKLOADS = [{"uuid": "n512", "axes": {"N": 512}, "inputs": {"q": {"type": "random"}}}]

CHILD = """
import runpy, sys
sys.argv = ["solbench", "sol", sys.argv[1], "-H", "B200_1500MHz", "--json"]
try:
    runpy.run_module("solbench", run_name="__main__")
except SystemExit as stop:
    assert not stop.code, stop.code
from solbench.sol.dynamo_deferral import GUARD_ATTRIBUTE, _guarded_functions
print(json.dumps({
    "dynamo": "torch._dynamo" in sys.modules,
    "guarded": len(_guarded_functions()),
    "left_behind": sum(hasattr(f, GUARD_ATTRIBUTE) for f in _guarded_functions()),
}))
"""


@pytest.mark.slow
def test_solbench_sol_in_a_fresh_process_does_not_import_torch_dynamo(tmp_path):
    write_problem(tmp_path / "set" / "guarded_ops", GUARDED_OPS, vector_workloads(4096))
    write_problem(tmp_path / "set" / "attention", ATTENTION, ATTENTION_WORKLOADS)
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + CHILD, str(tmp_path / "set")],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    *problems, report = (json.loads(line) for line in done.stdout.strip().splitlines())
    results = {problem["folder"]: problem["workloads"] for problem in problems}
    assert set(results) == {"guarded_ops", "attention"}, done.stdout[-2000:]
    for workloads in results.values():
        assert workloads[0]["coverage"]["full"] and workloads[0]["t_sol_ms"] > 0
    assert report["guarded"] > 100  # torch's wrappers were found
    assert not report["dynamo"], "the analysis imported torch._dynamo"
    assert report["left_behind"] == 0, "torch's compile guards were not handed back after the analysis"


THREADS = """
import threading
import torch
from solbench.sol.dynamo_deferral import GUARD_ATTRIBUTE, _guarded_functions, dynamo_import_deferred

def deferred() -> int:
    with dynamo_import_deferred():
        return sum(getattr(f, GUARD_ATTRIBUTE, None) is f for f in _guarded_functions())

alone = deferred()
stop = threading.Event()
other = threading.Thread(target=stop.wait)
other.start()
beside_a_thread = deferred()
stop.set()
other.join()
print(alone, beside_a_thread)
"""


@pytest.mark.slow
def test_the_compile_guards_are_swapped_only_in_a_process_without_other_threads():
    """The swap is the process's: another thread compiling meanwhile would trace into torch's guarded functions."""
    done = subprocess.run([sys.executable, "-c", THREADS], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    alone, beside_a_thread = map(int, done.stdout.split())
    assert alone > 100 and beside_a_thread == 0
