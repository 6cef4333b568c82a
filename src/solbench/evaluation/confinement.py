"""What confines one sandbox process: its environment, resource limits, user, network and filesystem.

The policy is decided in the parent when the session starts and applied in the child between
fork and exec (`apply`); `report` describes it for the trace, completed by what the sandbox
says it sees once it has built the solution (`note_sandbox_state`). session.py owns the
process itself.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solbench.evaluation import landlock, seccomp
from solbench.evaluation.containment import ProcessContainment
from solbench.sandbox.protocol import SandboxState

UNPRIVILEGED_ID = 65534  # nobody / nogroup
SANDBOX_MARK = "SOLBENCH_SANDBOX"
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4


@dataclass(frozen=True)
class SandboxLimits:
    memory_bytes: int | None
    """Address-space limit (CPU runs) and resident-set ceiling watched by the parent (all runs)."""
    max_reply_bytes: int = 1 << 36
    containment: str = "auto"
    """The strongest process containment allowed (containment.CONTAINMENTS); weaker ones are for trying fallbacks."""
    threads: int | None = None
    """torch's intra-op threads in the sandbox (its OMP_NUM_THREADS and MKL_NUM_THREADS): the count the evaluator
    computes the reference at (torch_settings.py); None: the evaluator's environment's, as it is."""

    @property
    def reply_bytes(self) -> int:
        """The largest reply the parent takes: never more than the sandbox may hold itself. The parent allocates a
        frame as its header declares it, and the solution can write a frame of its own on the channel: without
        this, a declared 64 GiB made the evaluator grow past any sandbox limit as the bytes came."""
        return self.max_reply_bytes if self.memory_bytes is None else min(self.max_reply_bytes, self.memory_bytes)


class Confinement:
    """The confinement of one sandbox with working directory `workdir`, marked with `token` in its environment."""

    def __init__(self, device: str, limits: SandboxLimits, workdir: Path, token: str):
        self.device, self.limits, self.workdir, self._token = device, limits, workdir, token
        # A sandbox that stays root passes every permission check, so Landlock alone must keep it out.
        self._keeps_root = root_sandbox_reason() is not None
        # As root, the child runs as `nobody` where that user can reach the interpreter (see apply).
        self._unprivileged = os.geteuid() == 0 and not self._keeps_root
        if self._unprivileged:
            for folder in (self.workdir, self.workdir / "tmp"):
                os.chown(folder, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
        self._last_capability = _last_capability()
        # Computed here, not between fork and exec, where only plain syscalls are safe.
        self._landlock = (
            str(self.workdir),
            landlock.readable_roots(keeps_root=self._keeps_root),
            landlock.device_paths(keeps_root=self._keeps_root),
            landlock.abi_version(),
        )
        self._parent_pid = os.getpid()
        self.processes = ProcessContainment(
            token, limits.containment, signals_scoped=self._landlock[3] >= landlock.SCOPE_ABI
        )
        """Holds every process the sandbox starts, so none outlives it (containment.py)."""
        self.report: dict[str, Any] = {
            "process": "separate interpreter, own session",
            "workdir": "private temporary directory",
            "environment": "scrubbed",
            "memory_limit_bytes": self.limits.memory_bytes,
            "address_space_rlimit": self._uses_address_limit(),
            "user": "nobody (65534)"
            if self._unprivileged
            else "the caller's (not root, or the interpreter is in a directory other users cannot enter)",
            "network": "pending: reported by the sandbox at build",
            "filesystem": "pending: reported by the sandbox at build",
            "signals": "pending: reported by the sandbox at build",
            "processes": self.processes.mechanism,
        }
        """How the sandbox is confined, for the trace (Trace.evaluation.solbench.confinement)."""

    @contextmanager
    def spawning(self) -> Iterator[None]:
        """Around starting the sandbox's process (see ProcessContainment.spawning)."""
        with self.processes.spawning():
            yield
        self.report["processes"] = self.processes.mechanism

    def note_sandbox_state(self, state: SandboxState) -> None:
        """The child reports its network namespace; another namespace than ours means no network."""
        ours = _network_namespace()
        if state.network_namespace and ours and state.network_namespace != ours:
            self.report["network"] = "isolated (own network namespace, loopback only, down)"
        else:
            self.report["network"] = "not isolated (no permission for a network namespace)"
        if self._keeps_root:
            capabilities = state.capabilities
            self.report["user"] = (
                "root, the caller's (the interpreter is in a directory other users cannot "
                "enter), "
                + ("with no capabilities" if _hex_or_none(capabilities) == 0 else f"with capabilities {capabilities}")
            )
        self.report["filesystem"] = (
            self._filesystem_confinement() if state.filesystem_confined else "not confined (no Landlock in this kernel)"
        )
        abi = self._landlock[3]
        if state.filesystem_confined and abi >= landlock.SCOPE_ABI:
            self.report["signals"] = (
                f"scoped to the sandbox (Landlock ABI {abi}): it can signal only its own "
                "processes, and reach no abstract Unix socket outside"
            )
        elif self.processes.pid_namespace:
            self.report["signals"] = (
                "scoped by its PID namespace: it can name, and so signal, only its own "
                f"processes (this kernel's Landlock, ABI {abi}, cannot scope signals)"
            )
        else:
            self.report["signals"] = (
                f"not scoped: this kernel's Landlock (ABI {abi}) predates signal scoping (ABI "
                f"{landlock.SCOPE_ABI}, Linux 6.12); the sandbox can signal processes of its "
                "own user"
            )

    def _filesystem_confinement(self) -> str:
        """Which Landlock set applied: a reader of the trace must see that a root sandbox got the narrow one."""
        abi = self._landlock[3]
        if not self._keeps_root:
            return (
                f"Landlock ABI {abi}: reads under system folders and the Python installation, writes under "
                "the working directory and /dev"
            )
        return (
            f"Landlock ABI {abi}: reads narrowed to {', '.join(landlock.ROOT_SYSTEM_FOLDERS)}, the loader's "
            "and user files of /etc, and the Python installation, because the sandbox keeps root; writes "
            "under the working directory and the plain and GPU devices of /dev"
        )

    def _uses_address_limit(self) -> bool:
        # CUDA reserves huge virtual ranges, so only CPU runs can cap the address space.
        return self.limits.memory_bytes is not None and self.device.startswith("cpu")

    def environment(self) -> dict[str, str]:
        # The OpenMP settings the evaluator runs under (thread count, wait policy) hold for the solution too, so
        # T_k and the reference's T_b are timed under one policy: on a loaded CPU, spinning workers are several
        # times slower than sleeping ones.
        keep = (
            "PATH",
            "LANG",
            "LC_ALL",
            "CUDA_VISIBLE_DEVICES",
            "CUDA_HOME",
            "LD_LIBRARY_PATH",
            "OMP_NUM_THREADS",
            "OMP_WAIT_POLICY",
            "GOMP_SPINCOUNT",
            "KMP_BLOCKTIME",
            "MKL_NUM_THREADS",
            "OPENBLAS_CORETYPE",
            "OPENBLAS_L2_SIZE",
            "CC",
            "CXX",
        )
        environment = {k: os.environ[k] for k in keep if k in os.environ}
        if self.limits.threads is not None:  # torch reads them when it loads: its pool's size from the start
            environment.update(OMP_NUM_THREADS=str(self.limits.threads), MKL_NUM_THREADS=str(self.limits.threads))
        source_root = str(Path(__file__).resolve().parents[2])  # where solbench is imported from (src/)
        environment.update(
            HOME=str(self.workdir),
            TMPDIR=str(self.workdir / "tmp"),
            TORCH_EXTENSIONS_DIR=str(self.workdir / "torch_extensions"),
            TRITON_CACHE_DIR=str(self.workdir / "triton_cache"),
            PYTHONPATH=source_root,
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONUNBUFFERED="1",
        )
        environment[SANDBOX_MARK] = self._token
        return environment

    def apply(self) -> None:
        """Runs in the child between fork and exec: limits, a network namespace, and an unprivileged user.

        As `nobody` the solution cannot read the parent's memory through /proc or ptrace, nor write
        outside its working directory and world-writable places.
        """
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        self.processes.enter()  # before Landlock, which forbids writing the cgroup's files
        memory = self.limits.memory_bytes
        if memory is not None and self._uses_address_limit():
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        _unshare_network()
        landlock.confine(*self._landlock)
        seccomp.refuse_clone3()  # CLONE_INTO_CGROUP with an O_PATH descriptor, which Landlock does not check
        if self._unprivileged:
            os.setgroups([])
            os.setgid(UNPRIVILEGED_ID)
            os.setuid(UNPRIVILEGED_ID)
        elif self._keeps_root:
            _drop_capabilities(self._last_capability)
        _die_with_parent(self._parent_pid)


ALLOW_ROOT_FLAG = "--allow-root-sandbox"


def describe_sandboxes() -> str:
    """What sandboxes started by this process would get, in one line, without starting one: for `solbench serve`
    and `solbench worker` to say plainly, before any submission runs, where the machine lacks a means."""
    from solbench.evaluation.containment import can_make_cgroup, can_make_pid_namespace

    keeps_root = root_sandbox_reason() is not None
    user = (
        "root without capabilities (user nobody cannot reach the interpreter)"
        if keeps_root
        else "nobody"
        if os.geteuid() == 0
        else "this user (not root)"
    )
    namespace = can_make_pid_namespace()
    abi = landlock.abi_version()
    processes = (
        "a cgroup each"
        if can_make_cgroup()
        else "a PID namespace each"
        if namespace
        else "a subreaper each, the weakest hold (no writable cgroup v2, no PID namespace)"
    )
    signals = (
        f"scoped by Landlock ABI {abi}"
        if abi >= landlock.SCOPE_ABI
        else "scoped by the PID namespace"
        if namespace
        else f"NOT scoped (Landlock ABI {abi} < {landlock.SCOPE_ABI}, no PID namespace): a "
        "sandbox can signal every process of its user"
    )
    return f"user {user}; processes: {processes}; signals: {signals}"


def root_sandbox_reason() -> str | None:
    """Why a sandbox started by this process would keep root, or None where it would not (not root, or `nobody`
    can reach the interpreter)."""
    if os.geteuid() != 0 or _world_can_run(sys.executable):
        return None
    return (
        f"the interpreter {Path(sys.executable).resolve()} is in a directory other users cannot enter, so the "
        "sandbox cannot switch to nobody"
    )


def require_unprivileged_sandbox(allow_root: bool) -> None:
    """For long-running evaluators of others' code (the service, workers): refuse to start sandboxes that keep root
    unless told to. Such a sandbox drops every capability and is narrowed by Landlock, but it still owns every
    root-owned file those rules leave open; docs/service-workers.md shows deployments where it runs as nobody."""
    from solbench.evaluation.errors import RootSandboxRefused

    reason = root_sandbox_reason()
    if reason is not None and not allow_root:
        raise RootSandboxRefused(
            f"sandboxes would run as root: {reason}. Install solbench and its Python where "
            "nobody can read them (docs/service-workers.md#an-unprivileged-sandbox), or pass "
            f"{ALLOW_ROOT_FLAG} to accept root sandboxes without capabilities"
        )


def _hex_or_none(mask: str | None) -> int | None:
    """A hex mask as the sandbox reports it (CapEff), or None where it is not one."""
    if mask is None:
        return None
    try:
        return int(mask, 16)
    except ValueError:
        return None


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
    if os.getppid() not in (parent_pid, 0):  # the parent died before the signal was armed (0: it is outside the
        os._exit(1)  # sandbox's PID namespace, which cannot name it)


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
