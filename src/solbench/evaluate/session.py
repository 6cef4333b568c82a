"""The trusted parent's handle on one sandbox process: start it, talk to it, stop it.

The child gets a private working directory, a fresh environment, resource limits and one end
of a socket pair; its stdout and stderr go to a pipe that is drained into a bounded log while
the parent waits. A request that outlives its deadline, a child that dies, or a reply that
breaks the protocol ends the session: the evaluator records it and starts a new one.
"""

from __future__ import annotations

import os
import resource
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

from solbench.evaluate import landlock, scheduling
from solbench.evaluate.capture import BoundedLog
from solbench.sandbox.wire import WireError, receive_message, send_message


@dataclass(frozen=True)
class SandboxLimits:
    memory_bytes: int | None
    """Address-space limit (CPU runs) and resident-set ceiling watched by the parent (all runs)."""
    max_reply_bytes: int = 1 << 36


class SandboxFailure(Exception):
    """The sandbox stopped answering. `kind` is ``timeout``, ``crash``, ``oom`` or ``protocol``."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


@dataclass
class SandboxSession:
    device: str
    limits: SandboxLimits
    workdir: Path = field(init=False)
    confinement: dict[str, Any] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="solbench-sandbox-"))
        self._token = secrets.token_hex(16)
        """Marks every process the sandbox starts (in its environment), to find ones that left its group."""
        (self.workdir / "tmp").mkdir()
        self.log = BoundedLog()
        # As root, the child runs as `nobody` where that user can reach the interpreter (see _apply_limits).
        self._unprivileged = os.geteuid() == 0 and _world_can_run(sys.executable)
        if self._unprivileged:
            for folder in (self.workdir, self.workdir / "tmp"):
                os.chown(folder, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
        # A sandbox that stays root passes every permission check, so Landlock alone must keep it out.
        self._keeps_root = os.geteuid() == 0 and not self._unprivileged
        self._last_capability = _last_capability()
        # Computed here, not between fork and exec, where only plain syscalls are safe.
        self._landlock = (str(self.workdir), landlock.readable_roots(keeps_root=self._keeps_root),
                          landlock.device_paths(keeps_root=self._keeps_root), landlock.abi_version())
        self._parent_pid = os.getpid()
        self._scheduling = scheduling.Scheduling.of()
        self.scheduling_changes: list[str] = []
        """Changes to the evaluator's CPU scheduling found while the sandbox lived (see scheduling.py)."""
        parent_end, child_end = socket.socketpair()
        read_fd, write_fd = os.pipe()
        self._socket = parent_end
        self._output = os.fdopen(read_fd, "rb", buffering=0)
        os.set_blocking(read_fd, False)
        command = [sys.executable, "-m", "solbench.sandbox.child", "--fd", str(child_end.fileno()),
                   "--device", self.device, "--workdir", str(self.workdir)]
        self.process = subprocess.Popen(
            command, cwd=self.workdir, env=self._environment(), stdin=subprocess.DEVNULL,
            stdout=write_fd, stderr=write_fd, pass_fds=(child_end.fileno(),),
            start_new_session=True, preexec_fn=self._apply_limits)
        child_end.close()
        os.close(write_fd)
        self.confinement = {
            "process": "separate interpreter, own session",
            "workdir": "private temporary directory",
            "environment": "scrubbed",
            "memory_limit_bytes": self.limits.memory_bytes,
            "address_space_rlimit": self._uses_address_limit(),
            "user": "nobody (65534)" if self._unprivileged else "the caller's (not root, or the interpreter is "
                                                                "in a directory other users cannot enter)",
            "network": "pending: reported by the sandbox at build",
            "filesystem": "pending: reported by the sandbox at build",
        }

    def note_sandbox_state(self, state: dict) -> None:
        """The child reports its network namespace; another namespace than ours means no network."""
        namespace = state.get("network_namespace") if isinstance(state, dict) else None
        ours = _network_namespace()
        if namespace and ours and namespace != ours:
            self.confinement["network"] = "isolated (own network namespace, loopback only, down)"
        else:
            self.confinement["network"] = "not isolated (no permission for a network namespace)"
        if self._keeps_root and isinstance(state, dict):
            capabilities = state.get("capabilities")
            self.confinement["user"] = ("root, the caller's (the interpreter is in a directory other users cannot "
                                        "enter), " + ("with no capabilities" if capabilities and
                                                      not int(str(capabilities), 16) else
                                                      f"with capabilities {capabilities}"))
        confined = isinstance(state, dict) and state.get("filesystem_confined") is True
        self.confinement["filesystem"] = self._filesystem_confinement() if confined else \
            "not confined (no Landlock in this kernel)"

    def _filesystem_confinement(self) -> str:
        """Which Landlock set applied: a reader of the trace must see that a root sandbox got the narrow one."""
        abi = self._landlock[3]
        if not self._keeps_root:
            return (f"Landlock ABI {abi}: reads under system folders and the Python installation, writes under "
                    "the working directory and /dev")
        return (f"Landlock ABI {abi}: reads narrowed to {', '.join(landlock.ROOT_SYSTEM_FOLDERS)}, the loader's "
                "and user files of /etc, and the Python installation, because the sandbox keeps root; writes "
                "under the working directory and the plain and GPU devices of /dev")

    def _uses_address_limit(self) -> bool:
        # CUDA reserves huge virtual ranges, so only CPU runs can cap the address space.
        return self.limits.memory_bytes is not None and self.device.startswith("cpu")

    def _environment(self) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "LD_LIBRARY_PATH",
                "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "CC", "CXX")
        environment = {k: os.environ[k] for k in keep if k in os.environ}
        import solbench

        source_root = str(Path(solbench.__file__).resolve().parent.parent)
        environment.update(HOME=str(self.workdir), TMPDIR=str(self.workdir / "tmp"),
                           TORCH_EXTENSIONS_DIR=str(self.workdir / "torch_extensions"),
                           TRITON_CACHE_DIR=str(self.workdir / "triton_cache"),
                           PYTHONPATH=source_root, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
        environment[SANDBOX_MARK] = self._token
        return environment

    def _apply_limits(self) -> None:
        """Runs in the child between fork and exec: limits, a network namespace, and an unprivileged user.

        As `nobody` the solution cannot read the parent's memory through /proc or ptrace, nor write
        outside its working directory and world-writable places.
        """
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self._uses_address_limit():
            resource.setrlimit(resource.RLIMIT_AS, (self.limits.memory_bytes, self.limits.memory_bytes))
        _unshare_network()
        landlock.confine(*self._landlock)
        if self._unprivileged:
            os.setgroups([])
            os.setgid(UNPRIVILEGED_ID)
            os.setuid(UNPRIVILEGED_ID)
        elif self._keeps_root:
            _drop_capabilities(self._last_capability)
        _die_with_parent(self._parent_pid)

    # --- requests -----------------------------------------------------------------------------
    def request(self, message: dict, timeout_s: float) -> dict:
        """Send `message` and wait for the reply; raises SandboxFailure and leaves the child dead."""
        try:
            send_message(self._socket, message)
        except OSError as error:
            self._drain()
            raise self._fail("crash", f"the sandbox closed its channel ({error.strerror})") from None
        deadline = time.monotonic() + timeout_s
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
                    else:
                        return self._receive(deadline)

    def _receive(self, deadline: float) -> dict:
        self._socket.settimeout(max(deadline - time.monotonic(), 0.1))
        try:
            reply = receive_message(self._socket, self.limits.max_reply_bytes)
        except socket.timeout:
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
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            raise self._fail("protocol", "reply is not an object with a boolean 'ok'")
        return reply

    def _check_memory(self) -> None:
        if self.limits.memory_bytes is None:
            return
        rss = _resident_bytes(self.process.pid)
        if rss is not None and rss > self.limits.memory_bytes:
            raise self._fail("oom", f"out of memory: resident set {rss / 2**30:.1f} GiB exceeds the limit of "
                             f"{self.limits.memory_bytes / 2**30:.1f} GiB")

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

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
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
        try:
            os.killpg(self.process.pid, signal.SIGSTOP)
        except (ProcessLookupError, PermissionError):
            pass
        self.scheduling_changes += scheduling.restore(self._scheduling)
        try:
            yield
        finally:
            try:
                os.killpg(self.process.pid, signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        if self.alive:
            try:
                send_message(self._socket, {"op": "exit"})
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        try:  # the child is gone; anything it started in its process group goes too
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        self._kill_escaped()
        self._socket.close()
        self._output.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


UNPRIVILEGED_ID = 65534  # nobody / nogroup
SANDBOX_MARK = "SOLBENCH_SANDBOX"
_CLONE_NEWNET = 0x40000000


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> None:
    """SIGKILL the sandbox when the process that started it dies, so no solution code outlives its evaluator.

    Set after the switch of user, which clears it. The signal follows the thread that started the
    sandbox: the evaluator starts sandboxes from the thread that runs the evaluation and waits on them.
    """
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)


_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4


def _last_capability() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 40


def _drop_capabilities(last: int) -> None:
    """A sandbox that stays root keeps uid 0 but none of root's capabilities once it execs: no kernel modules,
    raw devices, clock or priority changes, signals or ptrace across users. Emptying the bounding set and
    the ambient set is enough, since exec recomputes root's capabilities from them."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for capability in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)


def _unshare_network() -> None:
    """A fresh network namespace has only a loopback device, down: no network. Needs CAP_SYS_ADMIN."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).unshare(_CLONE_NEWNET)
    except (OSError, AttributeError):
        pass


def _world_can_run(executable: str) -> bool:
    """Whether an unprivileged user can reach and run this interpreter and its standard library."""
    import stat

    targets = [Path(executable).resolve(), Path(os.__file__).resolve().parent]
    for target in targets:
        for folder in [*target.parents, target] if target.is_dir() else target.parents:
            try:
                if not folder.stat().st_mode & stat.S_IXOTH:
                    return False
            except OSError:
                return False
    return all(os.stat(t).st_mode & stat.S_IROTH for t in targets)


def _network_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/net")
    except OSError:
        return None


def _resident_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
