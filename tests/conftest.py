"""Shared fixtures: tiny problems written to disk, solutions built from source text, fast configs."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from cache_guard import isolated_cache  # noqa: F401  (autouse: every test gets its own empty cache folder)

SHARED = Path(__file__).resolve().parents[2] / "shared"
sys.path.append(str(Path(__file__).resolve().parents[1]))  # suite_recipes/: tooling of the checkout, not the package


def process_alive(pid: int) -> bool:
    """Running, and not a zombie waiting for its parent (a killed orphan stays one until init reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


UPSTREAM = SHARED / "upstream-format"


def pytest_collection_modifyitems(config, items):
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    skip_upstream = pytest.mark.skip(reason=f"{UPSTREAM} is absent")
    skip_cxx = pytest.mark.skip(reason="no C++ compiler (c++) on PATH: .ci/run installs g++")
    has_cxx = shutil.which("c++") is not None
    for item in items:
        if "gpu" in item.keywords and not has_cuda:
            item.add_marker(skip_gpu)
        if "upstream" in item.keywords and not UPSTREAM.is_dir():
            item.add_marker(skip_upstream)
        if "cxx" in item.keywords and not has_cxx:
            item.add_marker(skip_cxx)


VECTOR_ADD = {
    "name": "vector_add",
    "op_type": "elementwise",
    "axes": {"N": {"type": "var"}},
    "inputs": {"x": {"shape": ["N"], "dtype": "float32"}, "y": {"shape": ["N"], "dtype": "float32"}},
    "outputs": {"z": {"shape": ["N"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(x, y):\n    return x + y\n",
}


def write_problem(root: Path, definition: dict, workloads: list[dict]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "definition.json").write_text(json.dumps(definition, indent=1))
    (root / "workload.jsonl").write_text("".join(json.dumps(w) + "\n" for w in workloads))
    return root


def vector_workloads(*sizes: int) -> list[dict]:
    return [
        {"uuid": f"n{n}", "axes": {"N": n}, "inputs": {"x": {"type": "random"}, "y": {"type": "random"}}} for n in sizes
    ]


@pytest.fixture
def vector_add_problem(tmp_path) -> Path:
    return write_problem(tmp_path / "vector_add", VECTOR_ADD, vector_workloads(1000, 4099))


def solution_dict(
    source: str,
    *,
    definition: str = "vector_add",
    dps: bool = False,
    language: str = "pytorch",
    entry: str = "kernel.py::run",
    extra_sources: dict[str, str] | None = None,
    name: str = "candidate",
    compile_options: dict | None = None,
) -> dict:
    sources = [{"path": entry.split("::")[0], "content": textwrap.dedent(source)}]
    sources += [{"path": p, "content": textwrap.dedent(c)} for p, c in (extra_sources or {}).items()]
    spec = {
        "languages": [language],
        "target_hardware": ["LOCAL"],
        "entry_point": entry,
        "destination_passing_style": dps,
    }
    if compile_options:
        spec["compile_options"] = compile_options
    return {"name": name, "definition": definition, "author": "tests", "spec": spec, "sources": sources}


def make_solution(source: str, **options):
    from solbench.spec import Solution

    return Solution.model_validate(solution_dict(source, **options))


@pytest.fixture
def fast_config():
    from solbench.evaluation import EvaluationConfig
    from solbench.sandbox import TimingPlan

    return EvaluationConfig(
        device="cpu",
        timeout_s=30,
        rounds=2,
        time_reference=False,
        memory_limit_bytes=4 << 30,
        timing=TimingPlan(budget_s=0.05, warmup_s=0.0, min_warmup=1, min_iterations=3),
    )


@pytest.fixture
def probed_home(isolated_cache):
    """This test's cache folder holding a probe of this CPU with round numbers, so `--hardware local` works
    without probing; the environment to hand to subprocesses."""
    from solbench.hardware.local import save_probe
    from solbench.hardware.probe import ProbeResult, cpu_model

    result = ProbeResult(
        cpu_model=cpu_model(),
        cores=2,
        cache_bytes={"L3": 32 << 20},
        bandwidth_bytes_per_s={"read": 20e9},
        matmul_flops={"float32": 100e9, "float64": 50e9, "bfloat16": 200e9, "float16": 100e9},
    )
    save_probe(result, isolated_cache / "hardware" / "local.json")
    return {"SOLBENCH_CACHE_DIR": str(isolated_cache)}
