"""Agents: what proposes candidates each round. Any shell command, or a built-in agent that needs no model.

A shell agent runs with its working directory set to the round folder, in its own process group, so
that a hang past the timeout is ended whole (its children too). Its crash, hang or silence is an
outcome of its round, never an error of the loop. While it runs, the loop keeps answering
`solbench test` requests (the `serve` callback).

Built-in agents read `problem/definition.json` from the round folder like any agent and write their
candidates there; they need no language model, so baselines can be set offline:

- ``builtin:reference``: the reference program, as is (one candidate);
- ``builtin:compile``: the reference under ``torch.compile`` in its modes (`COMPILE_MODES`), K per round.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from solbench.optimize.loop_errors import AgentError
from solbench.optimize.workspace import PROBLEM_DIR, SOLUTIONS_DIR, write_json_atomically

BUILTIN_PREFIX = "builtin:"
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")
"""torch.compile modes builtin:compile tries, in order; all run on a CPU (reduce-overhead's CUDA graphs are
skipped there)."""
OUTPUT_TAIL_CHARS = 2000
POLL_S = 0.1
TERMINATE_GRACE_S = 2.0


@dataclass(frozen=True)
class AgentOutcome:
    exit_code: int | None
    """None when it was killed for running past its timeout."""
    timed_out: bool
    seconds: float
    output_tail: str = ""


class Agent(Protocol):
    name: str

    def propose(
        self,
        round_folder: Path,
        *,
        round_number: int,
        candidates: int,
        environment: dict[str, str],
        timeout_s: float,
        log_path: Path,
        serve: Callable[[], None],
        on_start: Callable[[int], None] | None = None,
    ) -> AgentOutcome:
        """Leave this round's candidates in `round_folder`."""
        ...

    def is_finished(self, round_number: int, candidates: int) -> bool:
        """True when the agent has nothing left to propose from this round on (the loop then stops early)."""
        ...


def agent_from_spec(spec: str) -> Agent:
    """``builtin:reference``, ``builtin:compile``, or any shell command."""
    spec = spec.strip()
    if not spec:
        raise AgentError("--agent: empty command (give a shell command, builtin:reference or builtin:compile)")
    if spec.startswith(BUILTIN_PREFIX):
        name = spec[len(BUILTIN_PREFIX) :]
        if name == "reference":
            return ReferenceAgent()
        if name == "compile":
            return CompileAgent()
        raise AgentError(f"--agent {spec}: unknown built-in agent (known: builtin:reference, builtin:compile)")
    return ShellAgent(spec)


class ShellAgent:
    """A shell command (`sh -c`), e.g. ``claude -p "..."``, ``codex exec "..."`` or ``python3 agent.py``."""

    def __init__(self, command: str):
        self.name = command
        self.command = command

    def is_finished(self, round_number: int, candidates: int) -> bool:
        return False

    def propose(
        self,
        round_folder: Path,
        *,
        round_number: int,
        candidates: int,
        environment: dict[str, str],
        timeout_s: float,
        log_path: Path,
        serve: Callable[[], None],
        on_start: Callable[[int], None] | None = None,
    ) -> AgentOutcome:
        started = time.monotonic()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                ["/bin/sh", "-c", self.command],
                cwd=round_folder,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            if on_start:
                on_start(process.pid)  # the process group's id: a resume ends it if the loop was killed
            timed_out = False
            try:
                while process.poll() is None:
                    serve()
                    if time.monotonic() - started > timeout_s:
                        timed_out = True
                        _end_group(process)
                        break
                    try:
                        process.wait(POLL_S)
                    except subprocess.TimeoutExpired:
                        pass
            finally:
                _kill_group(process.pid)  # leftovers it started in the background, or all of it on Ctrl-C
                process.wait()
        return AgentOutcome(
            exit_code=None if timed_out else process.returncode,
            timed_out=timed_out,
            seconds=time.monotonic() - started,
            output_tail=_tail(log_path),
        )


def _end_group(process: subprocess.Popen) -> None:
    """SIGTERM to the agent's whole process group, then SIGKILL after a grace period."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(TERMINATE_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _kill_group(process.pid)


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def process_start_ticks(pid: int) -> int | None:
    """When the process started (clock ticks since boot, /proc/PID/stat field 22); None when it is gone.

    A process id can be reused; the pair (id, start) cannot, so it names one process for good."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def end_orphaned_group(group: int, start_ticks: int | None) -> bool:
    """SIGKILL a process group left running by a killed loop, if its leader is still that same process."""
    if start_ticks is None or process_start_ticks(group) != start_ticks:
        return False
    _kill_group(group)
    return True


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - OUTPUT_TAIL_CHARS))
            return log.read().decode(errors="replace")
    except OSError:
        return ""


class _BuiltinAgent:
    """Proposes a fixed list of candidates, `candidates` per round, in order."""

    name = "builtin"

    def _solutions(self, definition, device: str | None) -> list[tuple[dict, str]]:
        """The candidates, packaged for `device` (the loop's SOLBENCH_DEVICE)."""
        raise NotImplementedError

    def _count(self) -> int:
        raise NotImplementedError

    def is_finished(self, round_number: int, candidates: int) -> bool:
        return (round_number - 1) * candidates >= self._count()

    def propose(
        self,
        round_folder: Path,
        *,
        round_number: int,
        candidates: int,
        environment: dict[str, str],
        timeout_s: float,
        log_path: Path,
        serve: Callable[[], None],
        on_start: Callable[[int], None] | None = None,
    ) -> AgentOutcome:
        from solbench.spec import load_problem

        started = time.monotonic()
        definition = load_problem(round_folder / PROBLEM_DIR).definition
        proposed = self._solutions(definition, environment.get("SOLBENCH_DEVICE"))
        chosen = proposed[(round_number - 1) * candidates : round_number * candidates]
        for index, (solution, technique) in enumerate(chosen, 1):
            stem = f"{index:02d}"
            write_json_atomically(round_folder / SOLUTIONS_DIR / f"{stem}.json", solution)
            write_json_atomically(round_folder / SOLUTIONS_DIR / f"{stem}.strategy.json", {"technique": technique})
        message = f"{self.name}: wrote {len(chosen)} candidate(s): {', '.join(t for _, t in chosen)}\n"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(message)
        return AgentOutcome(exit_code=0, timed_out=False, seconds=time.monotonic() - started, output_tail=message)


class ReferenceAgent(_BuiltinAgent):
    name = "builtin:reference"

    def _count(self) -> int:
        return 1

    def _solutions(self, definition, device: str | None) -> list[tuple[dict, str]]:
        from solbench.spec import reference_solution

        packaged = reference_solution(definition, device)
        return [(json.loads(packaged.model_dump_json(exclude_none=True)), "reference (eager)")]


class CompileAgent(_BuiltinAgent):
    name = "builtin:compile"

    def _count(self) -> int:
        return len(COMPILE_MODES)

    def _solutions(self, definition, device: str | None) -> list[tuple[dict, str]]:
        from solbench.spec import compiled_reference_solution

        return [
            (
                json.loads(compiled_reference_solution(definition, mode, device).model_dump_json(exclude_none=True)),
                f"torch.compile mode={mode}",
            )
            for mode in COMPILE_MODES
        ]
