"""The run's journal: DIR/journal.jsonl, one typed record per line, appended atomically as things happen.

Everything a run does goes here (the run's settings, the problem card, each round, the agent's exit, edits it made to
`problem/`, every candidate with its step result, every `solbench test`, the final result), so that
`--resume` after a kill continues without evaluating a finished candidate again and `solbench replay`
can re-evaluate any candidate. A line is written with one `write` on a file opened for appending, then
fsynced: a kill leaves at most a partial last line, which `Journal.read` ignores and `Journal.open`
cuts off before the next append.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from solbench.optimize.loop_errors import JournalError

JOURNAL_FILE = "journal.jsonl"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    at: str = Field(default_factory=now)
    """UTC time the record was written."""


class RunRecord(_Record):
    type: Literal["run"] = "run"
    problem: str
    """The problem folder, as given."""
    problem_sha256: str
    """Hash of the problem's files: a resume on a changed problem is refused."""
    agent: str
    rounds: int
    candidates: int
    budget_evals: int | None = None
    agent_timeout_s: float
    settings: dict[str, Any] = Field(default_factory=dict)
    """Evaluation settings (hardware, device, timing), for replay."""


class CardRecord(_Record):
    type: Literal["card"] = "card"
    card: dict[str, Any]
    """The problem card `env.reset()` gave at the run's start (ProblemCard as JSON), for exported trajectories."""


class RoundStarted(_Record):
    type: Literal["round_started"] = "round_started"
    round: int
    budget_left: dict[str, Any] = Field(default_factory=dict)


class AgentStarted(_Record):
    type: Literal["agent_started"] = "agent_started"
    round: int
    process_group: int
    """The agent's process group (its leader's pid): a resume after a kill of the loop ends it."""
    start_ticks: int | None = None
    """When the leader started (/proc/PID/stat), so that a reused process id is never taken for it."""


class AgentFinished(_Record):
    type: Literal["agent"] = "agent"
    round: int
    exit_code: int | None = None
    """None when it was killed for running past its timeout."""
    timed_out: bool = False
    seconds: float = 0.0
    output_tail: str = ""
    """The last lines of what the agent printed (its full output is DIR/rounds/<round>.log)."""
    wrote: list[str] = Field(default_factory=list)
    """The candidate files it left, relative to the round folder."""


class ProblemEdited(_Record):
    type: Literal["problem_edited"] = "problem_edited"
    round: int
    files: list[str]
    """Files under problem/ whose hash changed, or that were removed or added, during the round."""


class CandidateRecord(_Record):
    type: Literal["candidate"] = "candidate"
    round: int
    k: int
    file: str
    """Where the agent wrote it, relative to the round folder."""
    solution: dict[str, Any] | None = None
    """The solution as written; None when it could not be read."""
    error: str | None = None
    """Why the file is not a solution (not evaluated, costs nothing)."""
    result: dict[str, Any] | None = None
    """env.step's StepResult, as JSON."""
    traces: list[dict[str, Any]] | None = None
    """The evaluation's traces (one per public workload), read from the result cache; None where it kept none
    (a TIMEOUT or crash is measured again next time, so it is not cached)."""
    technique: str | None = None

    @property
    def candidate_id(self) -> str:
        return f"{self.round}-{self.k}"


class TestRecord(_Record):
    __test__ = False  # not a pytest class
    type: Literal["test"] = "test"
    round: int
    solution_name: str | None = None
    result: dict[str, Any] | None = None
    error: str | None = None


class RoundFinished(_Record):
    type: Literal["round_finished"] = "round_finished"
    round: int
    best: str | None = None
    """Candidate id of the best so far."""
    best_reward: float | None = None
    budget_left: dict[str, Any] = Field(default_factory=dict)


class FinalRecord(_Record):
    type: Literal["final"] = "final"
    best: str | None = None
    result: dict[str, Any] | None = None
    """env.finalize's FinalResult, as JSON; None when no candidate was correct."""


JournalRecord = Annotated[
    RunRecord
    | CardRecord
    | RoundStarted
    | AgentStarted
    | AgentFinished
    | ProblemEdited
    | CandidateRecord
    | TestRecord
    | RoundFinished
    | FinalRecord,
    Field(discriminator="type"),
]
_RECORD = TypeAdapter(JournalRecord)


class Journal:
    """Append-only JSONL of JournalRecords; safe to read while being written, and after a kill."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> list:
        """Every complete record in order; a partial last line (a kill mid-write) is left out."""
        if not self.path.is_file():
            return []
        text = self.path.read_text()
        lines = text.split("\n")
        complete = lines[:-1]  # the piece after the last newline is empty or a partial record
        records = []
        for number, line in enumerate(complete, 1):
            if not line.strip():
                continue
            try:
                records.append(_RECORD.validate_json(line))
            except ValueError as error:
                raise JournalError(f"{self.path}:{number}: not a journal record ({_first_line(error)})") from None
        return records

    def open(self) -> None:
        """Prepare to append: create the folder, and cut off a partial last line left by a kill."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.is_file():
            self.path.touch()
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            os.truncate(self.path, data.rfind(b"\n") + 1)

    def append(self, record: _Record) -> None:
        line = (record.model_dump_json() + "\n").encode()
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def to_json(value: Any) -> dict[str, Any]:
    """A pydantic model (or plain dict) as a JSON-compatible dict for a record."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return json.loads(json.dumps(value, default=str))
