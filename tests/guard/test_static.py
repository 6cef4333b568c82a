"""Static rules: each fires on what it is for, and none blocks an honest solution or a reference."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import UPSTREAM, solution_dict
from solbench.guard import RULES, Severity, blocking, check_sources

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "source, rule",
    [
        ("import time\ntime.perf_counter = lambda: 0.0\n", "patch-module"),
        ("import torch as t\nt.mm = lambda a, b: a\n", "patch-module"),
        ("import builtins\nsetattr(builtins, 'print', None)\n", "patch-module"),
        ("import solbench\n", "harness-access"),
        ("import sys\nsys.modules['solbench'].x = 1\n", "harness-access"),
        ("import gc\n", "introspection"),
        ("import sys\nframe = sys._getframe(1)\n", "introspection"),
        (
            "def f():\n    return f.__code__.co_consts, (lambda: 0).__globals__, err.__traceback__.tb_frame\n",
            "introspection",
        ),
        ("path = '/proc/self/maps'\n", "proc-access"),
        ("data = open('/tmp/answers.pt', 'rb').read()\n", "file-access"),
        ("import torch\nx = torch.load('cache.pt')\n", "file-access"),
        ("from pathlib import Path\nPath('x').write_text('1')\n", "file-access"),
        ("import socket\n", "network"),
        ("from urllib.request import urlopen\n", "network"),
        ("import subprocess\n", "process"),
        ("import os\nos.system('ls')\n", "process"),
        ("exec('x = 1')\n", "dynamic-code"),
        ("code = compile('1', 'f', 'eval')\n", "dynamic-code"),
        ("import base64\nbase64.b64decode(b'AAAA')\n", "dynamic-code"),
        ("blob = '" + "QUJD" * 60 + "'\n", "dynamic-code"),
        ("import ctypes\n", "native-loading"),
        ("from torch.utils.cpp_extension import load_inline\n", "native-loading"),
        ("import pip\n", "runtime-install"),
        ("import torch\nclass Lazy(torch.Tensor):\n    pass\n", "tensor-subclass"),
        ("class Hook:\n    def __torch_function__(self, *a):\n        pass\n", "tensor-subclass"),
        ("import torch\ntorch.manual_seed(0)\n", "rng-state"),
        ("import numpy as np\nnp.random.seed(0)\n", "rng-state"),
        ("import torch\nstate = torch.get_rng_state()\n", "rng-state"),
        ("from functools import lru_cache\n@lru_cache(maxsize=None)\ndef run(x):\n    return x\n", "result-cache"),
        ("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", "precision-switch"),
        ("import torch\ntorch.set_float32_matmul_precision('medium')\n", "precision-switch"),
        ("import torch\ng = torch.cuda.CUDAGraph()\n", "cuda-graph"),
        ("import sys\nsys.settrace(None)\n", "trace-hooks"),
        ("import threading\n", "threads"),
        ("import asyncio\n", "async"),
        ("import torch\ns = torch.cuda.Stream()\n", "streams"),
        ("def run(x):\n    return x.data_ptr()\n", "pointer-branch"),
        ("seen = {}\ndef run(x):\n    seen[id(x)] = 1\n", "pointer-branch"),
        ("n = 0\ndef run(x):\n    global n\n    n += 1\n    return x\n", "call-counter"),
        ("import os\nv = os.environ.get('X')\n", "environment"),
        # names that dodge the attribute rules: built from pieces, computed for a protected module, or given as strings
        ("import torch\nobjects = torch.accelerator.graphs.gc.get_objects()\n", "introspection"),
        ("from torch.accelerator.graphs import gc\n", "introspection"),
        ("import torch\npid = torch.os.fork()\n", "process"),
        ("import sys\nvars(sys)['addaudithook'](print)\n", "introspection"),
        ("import sys\nsys.__dict__['setprofile'](print)\n", "introspection"),
        ("import torch\nlib = torch.library.Library('aten', 'IMPL')\n", "patch-module"),
        ("import torch\nT = torch.Tensor\nT.add_ = lambda *a: None\n", "patch-module"),
        ("import torch\ntorch.ops.aten.add_.Tensor.py_impl(torch._C.DispatchKey.CPU)(print)\n", "patch-module"),
        ("import torch\nkeep = torch._C._EnablePythonDispatcher()\n", "patch-module"),
        ("import torch\nNAME = 'gc'\ncollector = getattr(torch.accelerator.graphs, NAME)\n", "introspection"),
        ("import torch\n@torch.library.impl('aten::add_.Tensor', 'CPU')\ndef f(*a):\n    pass\n", "patch-module"),
        ("import sys\nframe = getattr(sys, '_get' + 'frame')(1)\n", "introspection"),
        ("def f(frame):\n    return getattr(frame, f'f_{\"back\"}')\n", "introspection"),
        ("import sys\nname = 'settrace'\nhook = getattr(sys, name)\n", "trace-hooks"),  # the name's value is known
        ("import sys\ndef hook(name):\n    return getattr(sys, name)\n", "introspection"),
        ("def f(g):\n    return getattr(g, '__closure__')\n", "introspection"),
        ("import os\npid = getattr(os, 'fork')()\n", "process"),
        ("import signal\n", "trace-hooks"),
        ("import importlib\nm = importlib.import_module('solbench')\n", "dynamic-code"),
        ("import torch\nfuture = torch.jit.fork(torch.add, 1, 2)\n", "threads"),
        # found by the red team: attribute paths as strings, getattr by other names, the harness's randomness
        ("import operator\nlocals_of = operator.attrgetter('tb_frame.f_back.f_locals')\n", "introspection"),
        ("from operator import attrgetter as a\nget = a(NAME)\n", "introspection"),
        ("import operator\nf = operator.methodcaller(name)\n", "introspection"),
        ("import functools\nf = functools.reduce(getattr, names, error)\n", "introspection"),
        ("path = ['tb_frame', 'f_back']\n", "introspection"),
        ("import secrets\nsecrets._sysrand._randbelow = lambda n: 0\n", "patch-module"),
    ],
)
def test_each_python_rule_fires(source, rule):
    findings = check_sources([("kernel.py", source)])
    assert rule in {f.rule for f in findings}, [f.one_line() for f in findings]
    finding = next(f for f in findings if f.rule == rule)
    assert finding.severity == RULES[rule].severity and finding.line >= 1 and finding.explanation


@pytest.mark.parametrize(
    "source, rule",
    [
        ('FILE* f = fopen("answers.bin", "rb");', "file-access"),
        ('int fd = open("/proc/self/mem", 0);', "proc-access"),
        ('system("curl example.com");', "process"),
        ('void* h = dlopen("libcheat.so", RTLD_NOW);', "native-loading"),
        ("cudaGraphLaunch(graph, stream);", "cuda-graph"),
        ("cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes);", "l2-persistence"),
        ("std::thread worker(f);", "threads"),
        ("thread(watch).detach();  // after using namespace std", "threads"),
        ("std::jthread worker(f);", "threads"),
        ("auto f = async(std::launch::async, work);", "threads"),
        ("__attribute__((constructor)) void early() {}", "trace-hooks"),
        ("struct sigaction action; sigaction(SIGALRM, &action, nullptr);", "trace-hooks"),
        ("timer_create(CLOCK_MONOTONIC, &event, &timer);", "trace-hooks"),
        ("PyEval_SetProfile(hook, nullptr);", "trace-hooks"),
        ("Py_AddPendingCall(work, nullptr);", "trace-hooks"),
    ],
)
def test_each_native_rule_fires(source, rule):
    assert rule in {f.rule for f in check_sources([("kernel.cu", source)])}


def test_own_custom_ops_and_torch_submodules_are_not_flagged():
    source = (
        "import torch\nfrom torch.types import Number\nw = torch.signal.windows.hann(8)\n"
        "@torch.library.custom_op('mylib::add', mutates_args=())\n"
        "def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    return x + y\n"
    )
    assert not check_sources([("k.py", source)])


def test_this_thread_and_thread_local_are_not_threads():
    assert not check_sources([("k.cpp", "thread_local int n;\nvoid f() { std::this_thread::yield(); }\n")])


def test_comments_and_aliases():
    assert not check_sources([("k.cu", '// fopen("x") would be bad\n/* system("ls") */\nint x = 1;\n')])
    aliased = check_sources([("k.py", "from time import perf_counter as clock\nimport time as t\nt.sleep = clock\n")])
    assert [f.rule for f in aliased] == ["patch-module"]


def _honest_sources() -> list[tuple[str, list[tuple[str, str]]]]:
    from evaluation.test_gpu import CUDA_ADD
    from evaluation.test_languages import CPP_ADD, TRITON_ADD

    honest = [
        ("triton add", [("kernel.py", TRITON_ADD)]),
        ("c++ add", [("add.cpp", CPP_ADD)]),
        ("cuda add", [("add.cu", CUDA_ADD)]),
    ]
    for path in sorted((ROOT / "examples").glob("*/solution_*.json")):
        data = json.loads(path.read_text())
        honest.append((str(path), [(s["path"], s["content"]) for s in data["sources"]]))
    references = sorted((ROOT / "examples").glob("*/definition.json")) + sorted(
        (ROOT / "problems").rglob("definition.json")
    )
    if UPSTREAM.is_dir():
        references += sorted(UPSTREAM.glob("*/definition.json"))
    honest += [(str(p), [("reference.py", json.loads(p.read_text())["reference"])]) for p in references]
    return honest


def test_no_honest_solution_or_reference_is_blocked():
    """The false-positive check: examples, the suite's and upstream references, the honest corpus entries."""
    from exploits.corpus import HONEST

    sources = _honest_sources()
    assert sum("/problems/" in name for name, _ in sources) >= 183  # the suite's references are among them
    sources += [(entry.name, [(entry.entry.split("::")[0], entry.source)]) for entry in HONEST]
    for name, files in sources:
        assert not blocking(check_sources(files)), (name, [f.one_line() for f in blocking(check_sources(files))])


@pytest.mark.slow
def test_check_command(tmp_path):
    clean, dirty = tmp_path / "clean.json", tmp_path / "dirty.json"
    clean.write_text(json.dumps(solution_dict("import torch\ndef run(x, y):\n    return x + y\n")))
    dirty.write_text(
        json.dumps(
            solution_dict("import torch, time\ntime.perf_counter = time.time\ndef run(x, y):\n    return x + y\n")
        )
    )
    command = [sys.executable, "-m", "solbench", "check"]
    ok = subprocess.run(command + [str(clean)], capture_output=True, text=True)
    assert ok.returncode == 0 and "no findings" in ok.stdout
    blocked = subprocess.run(command + [str(dirty), "--json"], capture_output=True, text=True)
    assert blocked.returncode == 1
    assert [f["rule"] for f in json.loads(blocked.stdout)] == ["patch-module"]
    assert json.loads(blocked.stdout)[0]["severity"] == Severity.BLOCK.value


@pytest.mark.parametrize(
    "source",
    [
        'import operator\nxs = sorted(ts, key=operator.attrgetter("ndim"))\n',  # a sort key by a plain name
        "from operator import itemgetter, attrgetter\n",
        '"""We never read frame.f_back."""\n',  # prose that mentions an attribute, not a path to one
    ],
)
def test_plain_attribute_names_and_prose_are_not_introspection(source):
    """The red team's second pass found these honest lines blocked by the rules added after its first."""
    assert not check_sources([("kernel.py", source)])
