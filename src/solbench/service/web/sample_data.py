"""A sample leaderboard written through the models: the data the page screenshots and the browser tests show.

`build_sample(data_dir, submissions=N)` writes a three-problem suite (two sets), imports it the way
`solbench serve` does, and adds users, ranked / private / test submissions with results whose traces are
real `Trace` records (scored by the service's own scoring), a rescore, a stored roofline analysis,
workers and a frozen set. Everything comes from one seeded generator, so two builds are identical
(timestamps are relative to the build time). Serve it afterwards with
``solbench serve --data DATA --suite DATA/suite --hardware H200 --workers 0``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import select

HARDWARE = "H200"
SEED = 14
FROZEN_SET = "L1"
OPEN_SET = "L2"
NAMED_USERS = ("alice", "bob", "carol", "dave", "eve")
"""Users with tokens (the tests sign in as them); the bulk users have none."""
HELD_OUT_QUALITY = 0.85
"""A ranked solution does a little worse on the held-out workloads than on the public ones it was tuned on, so
the submission page's public and held-out scores differ as they do on a real server."""

_PROBLEMS = {
    "vector_add_fp32": dict(
        set=FROZEN_SET,
        op_type="elementwise",
        axes={"N": {"type": "var"}},
        inputs={"x": ["N"], "y": ["N"]},
        outputs={"z": ["N"]},
        dtype="float32",
        reference="import torch\n\ndef run(x, y):\n    return x + y\n",
        workloads=[{"N": 1 << 20}, {"N": 1 << 24}],
        flops=lambda a: a["N"],
        moved=lambda a: 12 * a["N"],
        unit="vector",
    ),
    "softmax_rows_fp32": dict(
        set=FROZEN_SET,
        op_type="softmax",
        axes={"B": {"type": "var"}, "H": {"type": "const", "value": 4096}},
        inputs={"x": ["B", "H"]},
        outputs={"y": ["B", "H"]},
        dtype="float32",
        reference="import torch\n\ndef run(x):\n    return torch.softmax(x, dim=-1)\n",
        workloads=[{"B": 64}, {"B": 1024}, {"B": 8192}],
        flops=lambda a: 5 * a["B"] * 4096,
        moved=lambda a: 8 * a["B"] * 4096,
        unit="vector",
    ),
    "gemm_bf16_4096": dict(
        set=OPEN_SET,
        op_type="gemm",
        axes={"M": {"type": "var"}, "K": {"type": "const", "value": 4096}, "N": {"type": "const", "value": 4096}},
        inputs={"a": ["M", "K"], "b": ["K", "N"]},
        outputs={"c": ["M", "N"]},
        dtype="bfloat16",
        reference="import torch\n\ndef run(a, b):\n    return a @ b\n",
        workloads=[{"M": 16}, {"M": 512}, {"M": 8192}],
        flops=lambda a: 2 * a["M"] * 4096 * 4096,
        moved=lambda a: 2 * (a["M"] * 4096 * 2 + 4096 * 4096),
        unit="matrix",
    ),
}


@dataclass
class Sample:
    """What was built, for the tests to check the pages against."""

    data_dir: Path
    suite_dir: Path
    tokens: dict[str, str] = field(default_factory=dict)
    """Named user -> API token."""
    private_submission: int = 0
    """A private submission of alice's: only she (and admins) may see it."""
    open_set_submission: int = 0
    """A ranked submission of bob's to the open set: its code is hidden from others."""
    frozen_set_submission: int = 0
    """A ranked submission of carol's to the frozen set: its code is public."""
    rescored_submission: int = 0
    flagged_submission: int = 0
    """A ranked submission whose solution the static guard flagged (a warning finding)."""
    submissions: int = 0


def write_suite(root: Path) -> Path:
    """The sample problems as folders (definition.json + workload.jsonl) under `root`."""
    for name, spec in _PROBLEMS.items():
        folder = root / spec["set"] / name
        folder.mkdir(parents=True, exist_ok=True)
        definition = {
            "name": name,
            "op_type": spec["op_type"],
            "tags": [f"set:{spec['set']}"],
            "description": f"Sample {spec['op_type']} problem of the page screenshots.",
            "axes": spec["axes"],
            "inputs": {k: {"shape": v, "dtype": spec["dtype"]} for k, v in spec["inputs"].items()},
            "outputs": {k: {"shape": v, "dtype": spec["dtype"]} for k, v in spec["outputs"].items()},
            "reference": spec["reference"],
        }
        (folder / "definition.json").write_text(json.dumps(definition, indent=1))
        lines = [
            {
                "uuid": f"{name.split('_')[0]}-{'-'.join(f'{k}{v}' for k, v in axes.items())}",
                "axes": axes,
                "inputs": {k: {"type": "random"} for k in spec["inputs"]},
            }
            for axes in spec["workloads"]
        ]
        (folder / "workload.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return root


def build_sample(data_dir: Path, *, submissions: int = 400, users: int = 40, now: datetime | None = None) -> Sample:
    """Write the sample suite and database under `data_dir` (a fresh folder); returns what the tests look for."""
    from solbench.service.catalog import import_suites
    from solbench.service.db import open_database
    from solbench.service.settings import ServiceSettings

    suite_dir = write_suite(Path(data_dir) / "suite")
    settings = ServiceSettings(data_dir=Path(data_dir), suites=(suite_dir,), hardware=HARDWARE, workers=0)
    engine, session_factory = open_database(settings.database_url)
    import_suites(session_factory, settings.suite_folders(), settings.secret(), settings.held_out_per_problem)
    sample = Sample(data_dir=Path(data_dir), suite_dir=suite_dir)
    _Builder(session_factory, random.Random(SEED), now).fill(sample, submissions=submissions, users=users)
    engine.dispose()
    return sample


class _Builder:
    def __init__(self, session_factory, rng: random.Random, now: datetime | None):
        from solbench.evaluation.result_cache import harness_version
        from solbench.hardware import lookup
        from solbench.service.models import utcnow

        self.session_factory, self.rng = session_factory, rng
        self.now = now or utcnow()
        self.harness = harness_version()
        self.spec = lookup(HARDWARE)

    def fill(self, sample: Sample, *, submissions: int, users: int) -> None:
        from solbench.service import queries
        from solbench.service.auth import add_user
        from solbench.service.models import ProblemSet, User

        for name in NAMED_USERS:
            sample.tokens[name] = add_user(self.session_factory, name, admin=False).token
        with self.session_factory.begin() as session:
            session.add_all(
                User(name=f"user{index:03d}", created_at=self.now - timedelta(days=30))
                for index in range(users - len(NAMED_USERS))
            )
            session.add(
                ProblemSet(
                    name=OPEN_SET,
                    title="Level 2: matrix products",
                    description="Dense matrix products in bfloat16; open, so others' code stays hidden.",
                )
            )
            queries.freeze_set(session, FROZEN_SET, self.now - timedelta(days=1), title="Level 1: memory-bound ops")
        with self.session_factory.begin() as session:
            self._fill_session(session, sample, submissions)

    def _fill_session(self, session, sample: Sample, count: int) -> None:
        from solbench.service.models import ProblemVersion, ServedProblem, User

        users = list(session.scalars(select(User).order_by(User.id)))
        versions = {row.problem.name: row for row in session.scalars(select(ProblemVersion).join(ServedProblem))}
        t_sol = {name: self._analyse(session, versions[name]) for name in _PROBLEMS}
        named = {u.name: u for u in users}
        special = [
            ("alice", "gemm_bf16_4096", "private", 0.9),
            ("bob", "gemm_bf16_4096", "ranked", 0.8),
            ("carol", "vector_add_fp32", "ranked", 0.95),
            ("dave", "softmax_rows_fp32", "ranked", 0.6),
            ("eve", "softmax_rows_fp32", "ranked", 0.7),
        ]
        made = []
        self.next_id = 1
        for index in range(count):
            if index < len(special):
                user_name, problem, mode, quality = special[index]
                user = named[user_name]
            else:
                user = users[(int(self.rng.paretovariate(1.2)) - 1) % len(users)]
                problem = self.rng.choice(list(_PROBLEMS))
                mode = self.rng.choices(("ranked", "private", "test"), (8, 1, 1))[0]
                quality = self.rng.betavariate(2, 3)
            age = timedelta(hours=(count - index) / max(count, 1) * 24 * 14 * self.rng.uniform(0.8, 1.0))
            made.append(
                self._submission(
                    session, user, versions[problem], t_sol[problem], mode, quality, self.now - age, flagged=index == 5
                )
            )
        session.flush()  # one batched insert of every submission and result, before the rows that point at them
        sample.private_submission, sample.open_set_submission = made[0].id, made[1].id
        sample.frozen_set_submission, sample.flagged_submission = made[2].id, made[5].id
        sample.rescored_submission = self._rescore(session, made[3])
        self._queue_and_workers(session, users, versions)
        sample.submissions = count + 3

    def _analyse(self, session, version) -> dict[str, float]:
        """A stored SOL analysis with costs, from the sample problem's FLOPs and bytes at the hardware's peaks, of
        the public and held-out workloads (as the service stores it)."""
        from solbench.service.catalog import analyzer_version
        from solbench.service.models import SolAnalysis

        spec = _PROBLEMS[version.problem.name]
        rate = (
            self.spec.matrix_rate("bfloat16")[0] if spec["unit"] == "matrix" else self.spec.vector_rate(spec["dtype"])
        )
        costs, t_sol = {}, {}
        for workload in version.workloads + version.held_out:
            flops, moved = spec["flops"](workload["axes"]), spec["moved"](workload["axes"])
            compute_ms, memory_ms = flops / rate * 1e3, moved / self.spec.memory_bandwidth_bytes_per_s * 1e3
            costs[workload["uuid"]] = {"flops": flops, "bytes": moved, "compute_ms": compute_ms, "memory_ms": memory_ms}
            t_sol[workload["uuid"]] = max(compute_ms, memory_ms)
        session.add(
            SolAnalysis(
                problem_version_id=version.id,
                hardware=HARDWARE,
                analyzer_version=analyzer_version(HARDWARE),
                t_sol_ms=t_sol,
                costs=costs,
            )
        )
        return t_sol

    def _submission(
        self,
        session,
        user,
        version,
        t_sol: dict[str, float],
        mode: str,
        quality: float,
        created: datetime,
        *,
        flagged: bool = False,
    ):
        from solbench.service.models import Result, Submission
        from solbench.service.scoring import score_result

        problem = version.problem.name
        solution = _solution(problem, user.name, self.rng.randrange(10_000), flagged)
        row = Submission(
            id=self.next_id,
            user_id=user.id,
            problem_version_id=version.id,
            mode=mode,
            status="done",
            solution=solution,
            code_hash=f"{self.rng.getrandbits(128):032x}",
            created_at=created,
            started_at=created + timedelta(seconds=5),
            finished_at=created + timedelta(seconds=40),
            worker="gpu-worker-1",
            attempts=1,
        )
        self.next_id += 1
        failed = self.rng.random() < 0.08
        t_b = {uuid: ms * 2.5 for uuid, ms in t_sol.items()}
        traces = [
            _trace(
                problem,
                solution["name"],
                workload,
                self._latency(t_sol[workload["uuid"]], t_b[workload["uuid"]], quality),
                "RUNTIME_ERROR" if failed and i == 0 else "PASSED",
                self.harness,
                self.rng,
                flagged,
            )
            for i, workload in enumerate(version.workloads)
        ]
        held_out = []
        if mode == "ranked":  # only ranked submissions run the held-out workloads; their own generator keeps the
            rng = random.Random(f"{SEED}:{row.id}")  # public sample as it was before they were added
            held_out = [
                _trace(
                    problem,
                    solution["name"],
                    workload,
                    self._latency(t_sol[workload["uuid"]], t_b[workload["uuid"]], quality * HELD_OUT_QUALITY),
                    "PASSED",
                    self.harness,
                    rng,
                    flagged,
                )
                for workload in version.held_out
            ]
        scores = score_result(
            traces,
            held_out,
            t_sol,
            t_b,
            HARDWARE,
            held_out_workloads=[w["uuid"] for w in version.held_out],
            scored=mode != "test",
        )
        row.result = Result(
            submission_id=row.id,
            problem_version_id=version.id,
            score=scores.score,
            public_score=scores.public_score,
            held_out_score=scores.held_out_score,
            held_out_passed=scores.held_out_passed,
            verdict=scores.verdict,
            harness_version=self.harness,
            hardware=HARDWARE,
            device="NVIDIA H200",
            worker="gpu-worker-1",
            environment={"hardware": "NVIDIA H200"},
            clock={},
            traces=[t.model_dump(mode="json") for t in traces],
            held_out_traces=[t.model_dump(mode="json") for t in held_out],
            t_sol_ms=t_sol if mode != "test" else {},
            t_b_ms=scores.t_b_ms,
            created_at=created + timedelta(seconds=40),
        )
        session.add(row)
        return row

    def _latency(self, t_sol_ms: float, t_b_ms: float, quality: float) -> float:
        """T_k that gives about S = quality: S = (T_b - T_SOL) / ((T_k - T_SOL) + (T_b - T_SOL))."""
        quality = min(max(quality, 0.05), 0.97)
        return t_sol_ms + (t_b_ms - t_sol_ms) * (1 - quality) / quality

    def _rescore(self, session, submission) -> int:
        from solbench.service.models import ScoreChange

        result = submission.result
        old = round((result.score or 0) - 0.04, 4)
        session.add(
            ScoreChange(
                submission_id=submission.id,
                at=self.now - timedelta(hours=3),
                old_score=old,
                new_score=result.score,
                old_harness="0.0.9+0123456789abcdef",
                new_harness=result.harness_version,
                reason="rescored: T_SOL of softmax now counts the exp on the SFUs",
            )
        )
        result.rescored_at = self.now - timedelta(hours=3)
        return submission.id

    def _queue_and_workers(self, session, users, versions) -> None:
        from solbench.service.models import Submission, Worker

        version = versions["gemm_bf16_4096"]
        for index, status in enumerate(("queued", "queued", "running")):
            self.next_id += 1
            session.add(
                Submission(
                    id=self.next_id,
                    user_id=users[index].id,
                    problem_version_id=version.id,
                    mode="ranked",
                    status=status,
                    solution=_solution(version.problem.name, users[index].name, index),
                    code_hash=f"{index:064x}",
                    created_at=self.now - timedelta(minutes=index + 1),
                    worker="gpu-worker-1" if status == "running" else None,
                )
            )
        session.flush()
        running = session.scalar(select(Submission.id).where(Submission.status == "running"))
        from solbench.service.worker_hardware import hardware_figures

        def worker(name: str, hardware: str, seen_s_ago: float, **fields) -> Worker:
            figures = hardware_figures(hardware)
            return Worker(
                name=name,
                hardware=hardware,
                last_seen=self.now - timedelta(seconds=seen_s_ago),
                heartbeat_s=300.0,
                beats_when_idle=True,  # the sample is read minutes after it is built
                hardware_figures=figures.model_dump() if figures else None,
                **fields,
            )

        session.add_all(
            [
                worker(
                    "gpu-worker-1",
                    HARDWARE,
                    0,
                    device="cuda:0",
                    current_submission_id=running,
                    evaluations=812,
                    started_at=self.now - timedelta(days=2),
                ),
                worker(
                    "gpu-worker-2",
                    HARDWARE,
                    3,
                    device="cuda:1",
                    evaluations=790,
                    started_at=self.now - timedelta(days=2),
                ),
                worker(
                    "old-box",
                    "A100_SXM4_80GB",
                    86400,
                    device="cuda:0",
                    evaluations=41,
                    started_at=self.now - timedelta(days=5),
                ),
            ]
        )


def _solution(problem: str, author: str, variant: int, flagged: bool = False) -> dict:
    body = "    return x + y\n" if problem.startswith("vector") else "    return run_kernel(*args)\n"
    source = f"# {author}'s kernel for {problem}, variant {variant}\nimport torch\n\n"
    if flagged:
        source += "import time\n\n"
    source += f"def run(*args):\n{body}"
    return {
        "name": f"{author}-{problem.split('_')[0]}-v{variant}",
        "definition": problem,
        "author": author,
        "spec": {
            "languages": ["pytorch"],
            "target_hardware": [HARDWARE],
            "entry_point": "kernel.py::run",
            "destination_passing_style": False,
        },
        "sources": [{"path": "kernel.py", "content": source}],
    }


def _trace(
    problem: str,
    solution: str,
    workload: dict,
    latency_ms: float,
    status: str,
    harness: str,
    rng: random.Random,
    flagged: bool,
):
    from solbench.spec import Trace

    samples = sorted(latency_ms * rng.lognormvariate(0, 0.04) for _ in range(15))
    median = samples[len(samples) // 2]
    checks = []
    if flagged:
        checks.append(
            {
                "rule": "static:timer-import",
                "passed": True,
                "phase": "static",
                "detail": "kernel.py:4: timer-import (warn): imports time next to the timed entry point",
            }
        )
    details = {
        "harness_version": harness,
        "device": "cuda",
        "device_name": "NVIDIA H200",
        "timer": "cuda_events",
        "checks": checks,
        "rounds": 3,
    }
    evaluation = {"status": status, "environment": {"hardware": "NVIDIA H200"}, "timestamp": "2026-11-30T12:00:00Z"}
    if status == "PASSED":
        details["timing"] = {
            "backend": "cuda_events",
            "samples_ms": samples,
            "warmup": 3,
            "median_ms": median,
            "mean_ms": sum(samples) / len(samples),
            "p10_ms": samples[1],
            "p90_ms": samples[-2],
            "cv": 0.04,
            "rel_std_err": 0.01,
            "cache_flush": True,
        }
        evaluation["correctness"] = {"max_relative_error": 1e-6, "max_absolute_error": 1e-6}
        evaluation["performance"] = {"latency_ms": median, "reference_latency_ms": 0.0, "speedup_factor": 0.0}
    else:
        details["failure"] = "RuntimeError: CUDA error: an illegal memory access was encountered"
    evaluation["solbench"] = details
    return Trace.model_validate(
        {
            "definition": problem,
            "solution": solution,
            "evaluation": evaluation,
            "workload": {"uuid": workload["uuid"], "axes": workload["axes"], "inputs": workload["inputs"]},
        }
    )
