"""What the loop tests share: a vector-add problem with a held-out workload, scripted agents, fast settings."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from conftest import VECTOR_ADD, vector_workloads, write_problem

SIZES = (1000, 4099, 20000, 50000)
"""Four workloads: the env holds one out (a quarter)."""

SOLUTION_HELPERS = """
import json, os, sys
from pathlib import Path

def solution(name, body="", description="", technique=None, path="solution.json", source=None):
    if source is None:
        source = "import torch\\n\\ndef run(x, y):\\n" + "".join("    " + line + "\\n" for line in body.splitlines())
    value = {"name": name, "definition": "vector_add", "author": "scripted agent", "description": description,
             "spec": {"languages": ["pytorch"], "target_hardware": ["LOCAL"], "entry_point": "kernel.py::run",
                      "destination_passing_style": False},
             "sources": [{"path": "kernel.py", "content": source}]}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(value))
    if technique:
        strategy = "strategy.json" if path == "solution.json" else path[:-5] + ".strategy.json"
        Path(strategy).write_text(json.dumps({"technique": technique}))

ROUND = int(os.environ["SOLBENCH_ROUND"])
"""

SLOW_ADD = "z = x + y\n" + "z = (x + y) * 1.0\n" * 40 + "return z"
FAST_ADD = "return x + y"
CHEAT = "import time\ntime.perf_counter_ns = lambda: 0\ndef run(x, y):\n    return x + y\n"


def vector_add_problem(root: Path) -> Path:
    return write_problem(root / "vector_add", VECTOR_ADD, vector_workloads(*SIZES))


def agent_command(tmp_path: Path, body: str, name: str = "agent.py") -> str:
    """A scripted agent: a Python script in tmp_path, run by this interpreter, with the helpers above."""
    script = tmp_path / name
    script.write_text(SOLUTION_HELPERS + textwrap.dedent(body))
    return f"{sys.executable} {script}"


def journal_records(workspace: Path) -> list[dict]:
    return [json.loads(line) for line in (workspace / "journal.jsonl").read_text().splitlines() if line]


def fast_settings(problem: Path, agent: str, workspace: Path, config, **options):
    from solbench.optimize.run_settings import OptimizeSettings

    return OptimizeSettings(
        problem=problem,
        agent=agent,
        workspace=workspace,
        config=config,
        baselines=write_baselines(workspace.parent),
        **options,
    )


FAST_CLI_OPTIONS = ["--device", "cpu", "--correctness-rounds", "1", "--timing-budget", "0.05", "--timeout", "60"]


def loop_config():
    """One correctness round and a short timing budget: the loop's tests check the loop, not the evaluator."""
    from solbench.evaluation import EvaluationConfig
    from solbench.sandbox import TimingPlan

    return EvaluationConfig(
        device="cpu",
        timeout_s=60,
        rounds=1,
        time_reference=False,
        memory_limit_bytes=4 << 30,
        timing=TimingPlan(budget_s=0.03, warmup_s=0.0, min_warmup=1, min_iterations=3),
    )


def write_baselines(root: Path, latency_ms: float = 0.05) -> Path:
    """T_b for every vector-add workload, so the env does not time the reference (one sandbox fewer per run)."""
    from solbench.scoring.baselines import Baseline, save_baselines

    path = root / "baselines.json"
    save_baselines(
        path,
        [
            Baseline(definition="vector_add", workload=f"n{n}", hardware="local", latency_ms=latency_ms, source="tests")
            for n in SIZES
        ],
        created="2026-01-01T00:00:00Z",
        harness_version="tests",
    )
    return path
