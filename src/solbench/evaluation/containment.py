"""Process containment: no process of a sandbox outlives it, and the parent can find and stop every one.

A solution can start processes (fork, a subprocess, a compiler) and detach them: ``setsid`` leaves
the sandbox's process group, a double fork leaves its process tree, and ``execve`` with an empty
environment drops the mark that session.py's last sweep looks for. The sandbox's processes are
therefore held by what they cannot leave, the best this machine offers, named in the trace:

- ``cgroup``: a cgroup v2 of the sandbox's own, entered between fork and exec. Every descendant is
  born in it and cannot move out (the cgroup files are root's, and Landlock keeps a sandbox that
  stays root from writing under /sys). ``cgroup.freeze`` stops them all while the reference is
  timed; ``cgroup.kill`` (Linux 5.14) ends them all at once.
- ``pid-namespace``: where the evaluator may make one (CAP_SYS_ADMIN: root), the sandbox is the init of a PID
  namespace of its own. The kernel kills everything in it when the sandbox dies, and nothing in it can name, let
  alone signal, a process outside. Used where no cgroup can be made, or where Landlock cannot scope signals
  (before Linux 6.12); the namespace is made for the one thread that starts the sandbox and undone at once.
- ``subreaper``: where neither can be made (no writable cgroup v2 hierarchy, as for most users
  who are not root), the sandbox is its own child subreaper: orphans are reparented to it, not to
  init, so walking its process tree finds them while it lives. A solution that clears the flag
  (prctl through ctypes) gets past this one; the trace says which applied.

Signals are the other half of containment: landlock.py scopes them to the sandbox's own Landlock
domain (ABI 6, Linux 6.12), so nothing in it can signal the evaluator, a server or another sandbox; a PID
namespace does the same on older kernels.

`EvaluationConfig.containment` picks the strongest of these (``auto``) or caps them (``pid-namespace``,
``subreaper``), so each fallback can be tried on a machine that has the stronger ones.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

CONTAINMENTS = ("auto", "pid-namespace", "subreaper")
"""The strongest containment allowed, strongest first: cgroup and PID namespace, a PID namespace, a subreaper."""
_PR_SET_CHILD_SUBREAPER = 36
_CLONE_NEWPID, _CLONE_NEWNS = 0x20000000, 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
_SETTLE_S = 2.0


class ContainmentError(RuntimeError):
    """The evaluator's thread could not leave the PID namespace it made for a sandbox: starting more processes from
    it would put them in a namespace that dies with that sandbox."""


@dataclass(frozen=True)
class Detached:
    """A process of the sandbox outside its process group: evidence that the solution detached it."""

    pid: int
    name: str
    group: int

    def describe(self) -> str:
        return f"pid {self.pid} ({self.name}) in process group {self.group}"


class ProcessContainment:
    """The processes of one sandbox, marked by `token`; `enter` runs in the child between fork and exec."""

    def __init__(self, token: str, strongest: str = "auto", signals_scoped: bool = True):
        self._cgroup = _make_cgroup(f"solbench-sandbox-{token}") if strongest == "auto" else None
        # Opened here: between fork and exec only plain system calls are safe.
        self._procs_path = str(self._cgroup / "cgroup.procs").encode() if self._cgroup else None
        self._killed: list[int] = []
        self._strongest = strongest
        self.pid_namespace = strongest != "subreaper" and (self._cgroup is None or not signals_scoped)
        """Whether the sandbox is to be the init of a PID namespace; False once `spawning` found it cannot."""

    @property
    def mechanism(self) -> str:
        namespace = "the init of a PID namespace of its own: what it starts dies with it and sees no process outside"
        if self._cgroup is not None:
            kill = "cgroup.kill" if (self._cgroup / "cgroup.kill").exists() else "SIGKILL to each member"
            cgroup = f"a cgroup v2 of its own, frozen while the reference is timed and ended whole with {kill}"
            return f"{cgroup}; {namespace}" if self.pid_namespace else cgroup
        why = (
            f"containment capped at {self._strongest}"
            if self._strongest != "auto"
            else "no writable cgroup v2 hierarchy here"
            if self.pid_namespace
            else "no writable cgroup v2 hierarchy, and no permission for a PID namespace, here"
        )
        if self.pid_namespace:
            return f"{namespace} ({why})"
        return f"a child subreaper: orphans stay in its process tree and are killed with it ({why})"

    @contextmanager
    def spawning(self) -> Iterator[None]:
        """Around starting the sandbox: the calling thread's next child is the init of a new PID namespace. Only
        this thread is affected, and only until the block ends."""
        if not self.pid_namespace:
            yield
            return
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        own = os.open("/proc/thread-self/ns/pid", os.O_RDONLY)
        try:
            if libc.unshare(_CLONE_NEWPID) != 0:  # no CAP_SYS_ADMIN: the weaker containment applies
                self.pid_namespace = False
                yield
                return
            try:
                yield
            finally:
                if libc.setns(own, _CLONE_NEWPID) != 0:
                    raise ContainmentError(
                        f"cannot return to the evaluator's PID namespace: {os.strerror(ctypes.get_errno())}"
                    )
        finally:
            os.close(own)

    def enter(self) -> None:
        """In the child, before exec: join the sandbox's cgroup and become a subreaper for what it starts; as the
        init of a PID namespace, see its own /proc (below)."""
        if self.pid_namespace:
            _mount_own_proc()
        if self._procs_path is not None:
            fd = os.open(self._procs_path, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        except (OSError, AttributeError):
            pass

    def members(self, sandbox_pid: int) -> list[int]:
        """Every live process of the sandbox, the sandbox's own included."""
        if self._cgroup is not None:
            return _read_pids(self._cgroup / "cgroup.procs")
        return _tree(sandbox_pid)

    def detached(self, sandbox_pid: int) -> list[Detached]:
        """Processes of the sandbox that left its process group (setsid, setpgid): still running after a call."""
        found = []
        for pid in self.members(sandbox_pid):
            stat = _stat(pid)
            if pid != sandbox_pid and stat is not None and stat[2] != sandbox_pid and stat[1] != "Z":
                found.append(Detached(pid, stat[0], stat[2]))
        return found

    def stop(self, sandbox_pid: int) -> None:
        """Stop every process of the sandbox (the parent times the reference meanwhile)."""
        cgroup = self._cgroup
        if cgroup is not None and _write(cgroup / "cgroup.freeze", "1"):
            _wait_for(lambda: "frozen 1" in _read(cgroup / "cgroup.events"))
            return
        _signal_until_stable(lambda: self.members(sandbox_pid), signal.SIGSTOP)

    def resume(self, sandbox_pid: int) -> None:
        if self._cgroup is not None and _write(self._cgroup / "cgroup.freeze", "0"):
            return
        for pid in self.members(sandbox_pid):
            _kill(pid, signal.SIGCONT)

    def kill_all(self, sandbox_pid: int | None) -> None:
        """SIGKILL every process of the sandbox. `sandbox_pid` is None once the sandbox's own process was reaped:
        its pid may then name another process, and only the cgroup still knows the sandbox's."""
        if self._cgroup is not None:
            self._kill_cgroup(self._cgroup)
        elif sandbox_pid is not None:
            _signal_until_stable(lambda: _tree(sandbox_pid), signal.SIGSTOP)  # no fork can race the kill below
            self._killed = _tree(sandbox_pid)
            for pid in self._killed:
                _kill(pid, signal.SIGKILL)

    def _kill_cgroup(self, cgroup: Path) -> None:
        if not _write(cgroup / "cgroup.kill", "1"):
            _write(cgroup / "cgroup.freeze", "1")
            for pid in _read_pids(cgroup / "cgroup.procs"):
                _kill(pid, signal.SIGKILL)
            _write(cgroup / "cgroup.freeze", "0")  # a frozen process dies only once thawed

    def release(self) -> None:
        """After the sandbox's own process was reaped: kill what is left and remove the cgroup."""
        self.kill_all(None)
        cgroup = self._cgroup
        if cgroup is None:  # SIGKILL is delivered asynchronously: wait until each one has died
            _wait_for(lambda: not any(_running(pid) for pid in self._killed))
            return
        _wait_for(lambda: not _read_pids(cgroup / "cgroup.procs"))
        try:
            os.rmdir(cgroup)
        except OSError:
            pass


def _mount_own_proc() -> None:
    """Mount a /proc of the sandbox's PID namespace, in a mount namespace of its own.

    The inherited /proc belongs to the evaluator's namespace: it lists every process of the machine, and its
    /proc/self/task/TID names threads by ids the sandbox does not have (its thread ids are the namespace's), so
    the thread guard would read other tasks. Raises OSError where it cannot: the sandbox must not start so.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    calls = (
        (libc.unshare, (_CLONE_NEWNS,)),
        (libc.mount, (None, b"/", None, _MS_REC | _MS_PRIVATE, None)),  # nothing propagates to the host
        (libc.mount, (b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)),
    )
    for call, arguments in calls:
        if call(*arguments) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"cannot mount the sandbox's own /proc: {os.strerror(error)}")


def can_make_pid_namespace() -> bool:
    """Whether this process may make a sandbox's PID namespace: root's CAP_SYS_ADMIN, as for its network namespace
    (`spawning` still falls back, and says so, where the unshare is refused)."""
    return os.geteuid() == 0


def can_make_cgroup() -> bool:
    """Whether this process may make a sandbox's cgroup: tried with an empty one, removed at once."""
    probe = _make_cgroup(f"solbench-probe-{os.getpid()}")
    if probe is None:
        return False
    probe.rmdir()
    return True


def _make_cgroup(name: str) -> Path | None:
    """A new cgroup v2 below this process's own, or None where this process may not make one."""
    parent = _own_cgroup()
    if parent is None:
        return None
    folder = parent / name
    try:
        folder.mkdir()
    except OSError:
        return None
    if not os.access(folder / "cgroup.procs", os.W_OK):
        folder.rmdir()
        return None
    return folder


def _own_cgroup() -> Path | None:
    """This process's cgroup in the v2 hierarchy (mounted alone, or beside v1 controllers as `unified`)."""
    mount = None
    try:
        with open("/proc/self/mountinfo") as mounts:
            for line in mounts:
                fields, _, tail = line.partition(" - ")
                if tail.split(" ", 1)[0] == "cgroup2":
                    mount = fields.split()[4]
                    break
        with open("/proc/self/cgroup") as cgroups:
            own = next((line.strip()[3:] for line in cgroups if line.startswith("0::")), None)
    except OSError:
        return None
    if mount is None or own is None:
        return None
    return Path(mount) / own.lstrip("/")


def _tree(root: int) -> list[int]:
    """`root` and its descendants, through /proc/PID/task/TID/children."""
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        if pid in found:
            continue
        found.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            queue += [int(child) for child in _read(Path(f"/proc/{pid}/task/{task}/children")).split()]
    return found


def _stat(pid: int) -> tuple[str, str, int] | None:
    """(name, state, process group) from /proc/PID/stat."""
    text = _read(Path(f"/proc/{pid}/stat"))
    if ")" not in text:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    try:
        return name, fields[0], int(fields[2])
    except (IndexError, ValueError):
        return None


def _running(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[1] != "Z"


def _signal_until_stable(members, signum: int) -> None:
    """Send `signum` to every member until a pass finds none it had not signalled (a fork may race a pass)."""
    sent: set[int] = set()
    for _ in range(100):
        fresh = [pid for pid in members() if pid not in sent]
        if not fresh:
            return
        for pid in fresh:
            _kill(pid, signum)
        sent.update(fresh)


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _read_pids(path: Path) -> list[int]:
    return [int(pid) for pid in _read(path).split()]


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, ValueError):
        return ""


def _write(path: Path, text: str) -> bool:
    try:
        path.write_text(text)
        return True
    except OSError:
        return False


def _wait_for(condition, timeout_s: float = _SETTLE_S) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True
