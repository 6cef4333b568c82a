"""The trusted parent's handle on one sandbox process: start it, talk to it, stop it.

The child gets a private working directory, the confinement confinement.py decides (environment,
limits, user, network, filesystem) and one end of a socket pair, over which protocol.py's
messages travel; its stdout and stderr go to a pipe that is drained into a bounded log while
the parent waits. A request that outlives its deadline, a child that dies, or a reply that
breaks the protocol ends the session: the evaluator records it and starts a new one.
"""

from __future__ import annotations

import os
import secrets
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solbench.evaluation import scheduling
from solbench.evaluation.capture import BoundedLog
from solbench.evaluation.confinement import SANDBOX_MARK, Confinement, SandboxLimits
from solbench.sandbox import protocol
from solbench.sandbox.channel_guard import CHANNEL_TAMPERED_EXIT
from solbench.sandbox.protocol import ExitRequest, ProtocolError, SandboxState
from solbench.sandbox.wire import WireError, receive_message, send_message


class SandboxFailure(Exception):
    """The sandbox stopped answering. `kind` is ``timeout``, ``crash``, ``oom`` or ``protocol``.

    Not a SolbenchError: it is the solution's failure, which the evaluator records as a trace status.
    """

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


@dataclass
class SandboxSession:
    device: str
    limits: SandboxLimits
    workdir: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="solbench-sandbox-"))
        self._token = secrets.token_hex(16)
        """Marks every process the sandbox starts (in its environment), to find ones that left its group."""
        (self.workdir / "tmp").mkdir()
        self.log = BoundedLog()
        self._memory_checked = 0.0
        """When `_check_memory` last read the sandbox's memory (time.monotonic)."""
        self._confinement = Confinement(self.device, self.limits, self.workdir, self._token)
        self._scheduling = scheduling.Scheduling.of()
        self.scheduling_changes: list[str] = []
        """Changes to the evaluator's CPU scheduling found while the sandbox lived (see scheduling.py)."""
        line_flush_arguments = self._line_flush_arguments()
        parent_end, child_end = socket.socketpair()
        read_fd, write_fd = os.pipe()
        self._socket = parent_end
        self._output = os.fdopen(read_fd, "rb", buffering=0)
        os.set_blocking(read_fd, False)
        command = [
            sys.executable,
            "-m",
            "solbench.sandbox.child",
            "--fd",
            str(child_end.fileno()),
            "--device",
            self.device,
            "--workdir",
            str(self.workdir),
            *line_flush_arguments,
        ]
        environment = self._confinement.environment()
        with self._confinement.spawning():  # nothing else may start processes from this thread meanwhile
            self.process = subprocess.Popen(
                command,
                cwd=self.workdir,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                pass_fds=(child_end.fileno(),),
                start_new_session=True,
                preexec_fn=self._confinement.apply,
            )
        child_end.close()
        os.close(write_fd)

    def _line_flush_arguments(self) -> list[str]:
        """The native cache-line flush helper for a CPU sandbox, copied into its working directory (it loads the
        copy before any solution code runs, then removes it), or why there is none."""
        if not self.device.startswith("cpu"):
            return []
        from solbench.sandbox.line_flush import HELPER_FILE_NAME, HelperUnavailable, build_helper

        try:
            helper = build_helper()
        except HelperUnavailable as error:
            return ["--line-flush-missing", str(error)]
        copy = self.workdir / HELPER_FILE_NAME
        shutil.copyfile(helper, copy)
        copy.chmod(0o644)
        return ["--line-flush", str(copy)]

    def take_scheduling_baseline(self) -> None:
        """The evaluator's scheduling now is what `paused` restores and checks against: a spare sandbox handed to an
        evaluation (pool.py) ran no solution code since it started, while the evaluator may have changed its own
        scheduling meanwhile, legitimately."""
        self._scheduling = scheduling.Scheduling.of()

    @property
    def confinement(self) -> dict[str, Any]:
        """How the sandbox is confined, for the trace; complete once `note_sandbox_state` has run."""
        return self._confinement.report

    def note_sandbox_state(self, state: SandboxState) -> None:
        self._confinement.note_sandbox_state(state)

    # --- requests -----------------------------------------------------------------------------
    def request(self, message: protocol.RequestMessage, timeout_s: float) -> Any:
        """Send `message` (a protocol request) and wait for its reply: the request's own reply model or a failure
        (protocol.FAILURES). Raises SandboxFailure and leaves the child dead."""
        try:
            send_message(self._socket, protocol.encode(message))
        except OSError as error:
            self._drain()
            raise self._fail("crash", f"the sandbox closed its channel ({error.strerror})") from None
        deadline = time.monotonic() + timeout_s
        samples: list[float] = []
        seeds: list[int] = []
        """A timing request's samples and perturbation seeds, as the sandbox sent each (protocol.SampleTaken,
        protocol.SeedDrawn): a seed before its iteration's sample, where the plan perturbs."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._socket, selectors.EVENT_READ, "reply")
            selector.register(self._output, selectors.EVENT_READ, "output")
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._fail("timeout", f"no reply within {timeout_s:.0f} s")
                self._check_memory()
                for key, _ in selector.select(timeout=min(remaining, 0.25)):
                    if key.data == "output":
                        self._drain()
                        continue
                    reply = self._receive(message, deadline)
                    if isinstance(reply, protocol.SeedDrawn):
                        if reply.index != len(seeds) or len(seeds) != len(samples):
                            return protocol.GuardTripped(rule="streamed-samples", error=_SAMPLES_OUT_OF_ORDER)
                        seeds.append(reply.seed)
                    elif isinstance(reply, protocol.SampleTaken):
                        if reply.index != len(samples) or len(seeds) not in (0, len(samples) + 1):
                            return protocol.GuardTripped(rule="streamed-samples", error=_SAMPLES_OUT_OF_ORDER)
                        samples.append(reply.seconds)
                    else:
                        return _against_streamed(reply, samples, seeds) if message.reply == "timed" else reply

    def _receive(self, request: protocol.RequestMessage, deadline: float) -> Any:
        self._socket.settimeout(max(deadline - time.monotonic(), 0.1))
        try:
            reply = receive_message(self._socket, self.limits.reply_bytes)
        except TimeoutError:
            raise self._fail("timeout", "the sandbox stalled in the middle of a reply") from None
        except WireError as error:
            self._drain()
            try:  # a closed channel usually means the child died; give the kernel a moment to report it
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            if self.process.poll() is not None:
                raise self._fail("crash", self._exit_description()) from None
            raise self._fail("protocol", f"malformed reply: {error}") from None
        finally:
            self._socket.settimeout(None)
        self._drain()
        try:
            return protocol.parse_reply(reply, request)
        except ProtocolError as error:
            raise self._fail("protocol", str(error)) from None

    def _check_memory(self) -> None:
        """The sandbox's memory against its limit: all its processes together. The address-space limit is per
        process, so children (each a fresh interpreter) would otherwise get a whole limit each."""
        if self.limits.memory_bytes is None:
            return
        now = time.monotonic()
        if now - self._memory_checked < MEMORY_CHECK_S:  # a timed loop streams a message per sample
            return
        self._memory_checked = now
        members = self._confinement.processes.members(self.process.pid)
        if len(members) > 1:
            # resident sets first (a read of statm each): their sum bounds the proportional sets' from above, which
            # cost a walk of each process's page tables (tens of milliseconds for gigabytes), so those are read only
            # where the resident sets' sum is over the limit (a fork's shared pages counted twice)
            resident = sum(_resident_bytes(pid) or 0 for pid in members)
            if resident <= self.limits.memory_bytes:
                return
            held, what = _proportional_bytes(members), "its processes' proportional sets"
        else:
            held, what = _resident_bytes(self.process.pid), "resident set"
        if held is not None and held > self.limits.memory_bytes:
            raise self._fail(
                "oom",
                f"out of memory: {what} {held / 2**30:.1f} GiB exceeds the limit of "
                f"{self.limits.memory_bytes / 2**30:.1f} GiB",
            )

    def _drain(self) -> None:
        while True:
            try:
                chunk = self._output.read(1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                return
            self.log.write(chunk)

    def _exit_description(self) -> str:
        code = self.process.wait()
        if code < 0:
            name = signal.Signals(-code).name
            hint = " (likely out of memory)" if -code == signal.SIGKILL else ""
            return f"the sandbox was killed by {name}{hint}"
        if code == CHANNEL_TAMPERED_EXIT:
            return f"the sandbox exited with status {code}: it found its private channel replaced by the solution"
        return f"the sandbox exited with status {code}"

    def _fail(self, kind: str, message: str) -> SandboxFailure:
        if kind == "crash":
            try:
                self.process.wait(timeout=2)
                message = self._exit_description()
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        self._drain()
        return SandboxFailure(kind, message)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def detached_processes(self) -> list[str]:
        """Processes of the sandbox that left its process group and still run: a solution detached them."""
        return [p.describe() for p in self._confinement.processes.detached(self.process.pid)]

    def kill(self) -> None:
        self._kill_processes()
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        self._release()

    def _kill_processes(self) -> None:
        """Every process of the sandbox, its own first-started one included (once reaped, its pid is not used)."""
        self._confinement.processes.kill_all(self.process.pid if self.process.returncode is None else None)

    def _release(self) -> None:
        self._confinement.processes.release()
        self._kill_escaped()

    def _kill_escaped(self) -> None:
        """SIGKILL processes the sandbox started that left its process group (setsid): they carry its mark.

        A survivor would outlive the evaluation as the sandbox's user, free to read or seed the next
        sandbox's files or to load the machine while others are timed. /proc/PID/environ is the
        environment the process was started with, which a fork inherits whatever it does to os.environ.
        """
        mark = f"{SANDBOX_MARK}={self._token}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if mark in (entry / "environ").read_bytes().split(b"\0"):
                    os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ValueError):
                continue

    @contextmanager
    def paused(self):
        """Stop the sandbox's whole process group meanwhile (SIGSTOP), so it uses no CPU while the parent times;
        the parent's scheduling is back to what it was when the sandbox started."""
        self._confinement.processes.stop(self.process.pid)  # the whole cgroup or tree: those that left the group too
        self.scheduling_changes += scheduling.restore(self._scheduling)
        try:
            yield
        finally:
            self._confinement.processes.resume(self.process.pid)

    def close(self) -> None:
        """End the sandbox now. A sandbox is never reused, so nothing in it is worth a graceful exit: the child is
        told to exit and killed at once with its process group (the interpreter's own shutdown, torch loaded, took
        0.3-2 s here, on every evaluation's critical path)."""
        if self.alive:
            try:
                send_message(self._socket, protocol.encode(ExitRequest()))
            except OSError:
                pass
        self._kill_processes()  # the child and everything it started go
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        self._release()
        self._socket.close()
        self._output.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


MEMORY_CHECK_S = 0.05
"""Least seconds between two reads of the sandbox's memory: the receive loop checks at every message (a timed loop
streams one per sample) and at least every 0.25 s; reading its processes' list and memory each time took parent CPU
beside the solution's timed calls."""

_SAMPLES_OUT_OF_ORDER = (
    "the sandbox's channel carried a timing sample out of turn: something besides the harness wrote on it"
)


def _against_streamed(reply: Any, samples: list[float], seeds: list[int]) -> Any:
    """A timing request's reply, its samples and seeds checked against those streamed as each call was timed:
    records rewritten in the sandbox's memory after they were sent (the timing loop shares the solution's
    interpreter) are refused."""
    if not isinstance(reply, protocol.Timed):
        return reply
    if reply.samples_s == samples and (reply.seeds or []) == seeds and len(seeds) in (0, len(samples)):
        return reply
    replied, sent = [*reply.samples_s, *(reply.seeds or [])], [*samples, *seeds]
    changed = sum(a != b for a, b in zip(replied, sent)) + abs(len(replied) - len(sent))
    return protocol.GuardTripped(
        rule="streamed-samples",
        error=f"the timing loop's records were rewritten after they were taken: {changed} of {len(sent)} samples "
        "and seeds differ from those sent as each call was timed",
    )


def _proportional_bytes(pids: list[int]) -> int | None:
    """The memory `pids` hold together: each process's proportional set size (its shared pages divided among the
    processes sharing them, so a forked child's copy-on-write pages are not counted twice). None where none can be
    read."""
    total, read = 0, False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) << 10
                        read = True
                        break
        except (OSError, ValueError, IndexError):
            continue  # a process that ended meanwhile
    return total if read else None


def _resident_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
