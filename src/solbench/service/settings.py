"""Settings of one service: where its data lives, which suites it serves, how it evaluates and what it allows.

One pydantic model, so the server, its embedded workers (child processes, which get it as JSON in
SETTINGS_VARIABLE) and remote workers read the same values. Defaults are those of `solbench serve`
with no flags: a SQLite file in ./solbench-data, the suite in ./problems (and ./examples), one worker.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from solbench.evaluation.config import EvaluationConfig

SETTINGS_VARIABLE = "SOLBENCH_SERVICE_SETTINGS"
"""Environment variable holding the settings as JSON (how embedded workers receive them)."""
DEFAULT_DATA_DIR = Path("solbench-data")
DATABASE_FILE = "solbench.db"
MODES = ("test", "private", "ranked")
Mode = Literal["test", "private", "ranked"]


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


LIBRARY_EVALUATION = EvaluationConfig()
"""The library's evaluation defaults (those of `solbench eval`); EvaluationSettings reads its defaults from here."""


class EvaluationSettings(_Settings):
    """The knobs of EvaluationConfig a service sets; the rest keep the library's defaults.

    Every default is the library's (`LIBRARY_EVALUATION`), read rather than copied: a service that sets nothing
    evaluates as `solbench eval` does, and a changed library default changes the service's."""

    device: str = LIBRARY_EVALUATION.device
    """``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (cuda when present)."""
    rounds: int = LIBRARY_EVALUATION.rounds
    budget_s: float = LIBRARY_EVALUATION.timing.budget_s
    """Timed-loop budget per workload."""
    warmup_s: float = LIBRARY_EVALUATION.timing.warmup_s
    min_warmup: int = LIBRARY_EVALUATION.timing.min_warmup
    min_iterations: int = LIBRARY_EVALUATION.timing.min_iterations
    timeout_s: float = LIBRARY_EVALUATION.timeout_s
    memory_limit_gb: float | None = None
    """Sandbox memory limit; None: the library's default (half of physical memory)."""
    time_reference: bool = LIBRARY_EVALUATION.time_reference
    """Time the reference in the same run (T_b where no baseline is imported)."""

    def config(self, device: str | None = None) -> EvaluationConfig:
        """The EvaluationConfig of a ranked or private evaluation on `device` (default: this setting's)."""
        from dataclasses import replace

        base = LIBRARY_EVALUATION
        memory = int(self.memory_limit_gb * 2**30) if self.memory_limit_gb is not None else base.memory_limit_bytes
        timing = replace(
            base.timing,
            budget_s=self.budget_s,
            warmup_s=self.warmup_s,
            min_warmup=self.min_warmup,
            min_iterations=self.min_iterations,
        )
        return replace(
            base,
            device=device or self.device,
            rounds=self.rounds,
            timing=timing,
            timeout_s=self.timeout_s,
            memory_limit_bytes=memory,
            time_reference=self.time_reference,
        )

    def test_config(self, device: str | None = None) -> EvaluationConfig:
        """Mode `test`: correctness only, one round, the shortest timing, no reference timing; never scored."""
        from dataclasses import replace

        config = self.config(device)
        timing = replace(
            config.timing, budget_s=0.0, warmup_s=0.0, min_warmup=0, min_iterations=1, min_iterations_over_budget=1
        )
        return replace(config, rounds=1, timing=timing, time_reference=False)


class Limits(_Settings):
    """What one user may do; counted in the database so they hold across server processes."""

    max_body_bytes: int = 256 * 1024
    """Largest request body accepted (a submission's solution JSON is most of it); a larger one is answered 413.
    Published at GET /limits, so `solbench submit` checks before sending."""
    per_hour: dict[str, int] = Field(default_factory=lambda: {"test": 60, "private": 30, "ranked": 10})
    per_day: dict[str, int] = Field(default_factory=lambda: {"test": 500, "private": 200, "ranked": 50})
    max_queued: int = 10
    """Submissions of one user that may wait or run at once."""
    env_calls_per_hour: int = 600
    """Calls on a user's agent environments (POST /envs and each reset, step, test, finalize) per hour."""
    env_calls_per_day: int = 5000
    max_queued_env_calls: int = 8
    """Calls on one user's agent environments that may wait or run at once (each env runs one at a time)."""
    max_envs: int = 1000
    """Agent environments one user may have that are not finalized."""
    max_waiting_env_requests: int = Field(default=16, ge=1)
    """Requests of one user that may wait for an env call's answer at once (`?wait=` above 0), in each server
    process: each polls the database while it waits. One more is answered 429 before anything is queued."""


class ServiceSettings(_Settings):
    data_dir: Path = DEFAULT_DATA_DIR
    """Folder of the SQLite database, the result cache and the server's secret."""
    db_url: str | None = None
    """SQLAlchemy URL (``postgresql+psycopg://user@host/db``); None: SQLite in `data_dir`."""
    suites: tuple[Path, ...] = ()
    """Suite folders imported at start (each problem with a version); empty: ./problems and ./examples."""
    baselines: tuple[Path, ...] = ()
    """Baselines files (from `solbench baseline`) imported as T_b; empty: the files in ./baselines."""
    workers: int = Field(default=1, ge=0)
    """Embedded worker processes (without a broker)."""
    broker_url: str | None = None
    """A Celery broker (``redis://host:6379/0``): workers on other machines instead of embedded ones."""
    allow_root_sandbox: bool = False
    """Start embedded workers even where their sandboxes would keep root (the interpreter is where `nobody` cannot
    reach it); without it `solbench serve` refuses to (docs/service-workers.md)."""
    hardware: str = "local"
    """The hardware id results are scored on (T_SOL); `solbench hw list`."""
    evaluation: EvaluationSettings = EvaluationSettings()
    limits: Limits = Limits()
    held_out_per_problem: int = Field(default=2, ge=0)
    """Hidden workloads made per problem version for ranked submissions."""
    max_attempts: int = Field(default=3, ge=1)
    """Tries of a job whose evaluation failed for a reason outside the solution (infrastructure)."""
    heartbeat_s: float = 5.0
    stale_after_s: float = 60.0
    """A running job whose worker sent no heartbeat for this long is requeued."""
    poll_s: float = 0.3
    """How often an idle embedded worker looks for a queued job."""
    env_retention_days: float | None = Field(default=30.0, ge=1.0)
    """Agent environments untouched this long, with no call waiting or running, are deleted with their calls by the
    queue's reaper (their state and answers only grow); None keeps them for ever. At least a day, so the daily
    rate limits still count every call."""
    reach_dir: Path | None = None
    """Folder of `solbench reach` reports (*.json) whose shares the problem and set pages show; None: none."""

    @property
    def database_url(self) -> str:
        return self.db_url or f"sqlite:///{(self.data_dir / DATABASE_FILE).resolve()}"

    @property
    def cache_dir(self) -> Path:
        """The result cache shared by the workers of this data folder."""
        return self.data_dir / "result-cache"

    def user_cache_dir(self, user_id: int) -> Path:
        """One user's part of the result cache. A hit is another run of the same code, and its latencies are that
        run's: shared between users, a private guess of someone's hidden ranked code came back as a hit with their
        exact latencies (the service review), confirming the guess before the freeze as its code hash would."""
        return self.cache_dir / "users" / str(user_id)

    def suite_folders(self) -> tuple[Path, ...]:
        return self.suites or tuple(p for p in (Path("problems"), Path("examples")) if p.is_dir())

    def baseline_files(self) -> tuple[Path, ...]:
        return self.baselines or tuple(sorted(Path("baselines").glob("*.json")))

    def secret(self) -> str:
        """The server's secret (held-out workloads are derived from it), made once and kept in `data_dir`."""
        path = self.data_dir / "secret"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
        return path.read_text().strip()

    def to_env(self) -> dict[str, str]:
        return {SETTINGS_VARIABLE: self.model_dump_json()}

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> ServiceSettings:
        """The settings a parent handed down (SETTINGS_VARIABLE), else the defaults."""
        text = (environ if environ is not None else os.environ).get(SETTINGS_VARIABLE)
        return cls.model_validate_json(text) if text else cls()
