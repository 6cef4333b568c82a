"""Filesystem and signal confinement of the sandbox with Landlock (Linux 5.13+), applied between fork and exec.

Reads are allowed only under the system folders and the Python installation (what importing
torch, compiling an extension and running the interpreter need) and the sandbox's own /proc
entry; writes only under the sandbox's working directory and /dev. Everything else, the user's home and the evaluator's
files included, cannot be opened. Where the kernel has no Landlock the child runs unconfined and
the trace says so (the child reports whether it can list "/"). Where the kernel has Landlock ABI 6
(Linux 6.12), the same ruleset scopes signals and abstract Unix sockets to the sandbox (containment.py
holds its processes).

A sandbox that keeps root (the interpreter is where `nobody` cannot reach it) passes every
permission check inside those folders, so it gets a narrower set (`keeps_root=True`): of /etc
only the few files the loader, the C library and OpenSSL read, no /opt, /run or /var/lib beyond
the interpreter's own prefixes, and of /dev only the plain character devices and the GPU's, never
a disk, a terminal or another process's shared memory.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from pathlib import Path

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_VERSION_FLAG = 1
_PATH_BENEATH = 1
_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MODIFY = sum(1 << bit for bit in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
READ_ONLY = EXECUTE | READ_FILE | READ_DIR
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
SYSTEM_FOLDERS = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc",
    "/opt",
    "/sys",
    "/run",
    "/var/lib",
    "/usr/local/cuda",
)
# As root, what running Python, torch, triton, a C++ extension build and a GPU read, found by tracing those runs.
# /usr holds the compilers, headers and libcuda; /usr/local/cuda is named for where it links outside /usr; /sys
# has the CPU and PCI topology the GPU driver reads. Of /etc: the loader's cache and preload list, the time zone,
# user and group names (getpass.getuser() in torch.compile), locale aliases and OpenSSL's configuration (hashing
# by hashlib and the openssl tool), never a key, a password hash or a service's configuration.
ROOT_SYSTEM_FOLDERS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/sys", "/usr/local/cuda")
ROOT_SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.preload",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/locale.alias",
    "/etc/ssl/openssl.cnf",
)
ROOT_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
GPU_DEVICES = "/dev/nvidia*"  # nvidiactl, nvidia0.., nvidia-uvm, nvidia-caps/ (MIG)
# Of /proc, only the sandbox's own entry and machine-wide facts: never another process's memory or environment.
PROC_ENTRIES = (
    "/proc/self",
    "/proc/thread-self",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/filesystems",
    "/proc/mounts",
    "/proc/sys",
    "/proc/version",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/driver",
)


SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
SCOPE_ABI = 6
"""Landlock ABI 6 (Linux 6.12) scopes signals and abstract Unix sockets to the process's own domain."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def readable_roots(*, keeps_root: bool = False) -> list[str]:
    """Paths the sandbox may read: system folders, the interpreter's prefixes, site-packages and solbench.

    Not the rest of sys.path: it can hold the current directory or a test runner's root. With
    `keeps_root`, the narrower system set (ROOT_SYSTEM_FOLDERS and ROOT_SYSTEM_FILES): file
    permissions no longer keep the sandbox out of /etc/shadow or a database under /var/lib.
    """
    import site

    roots = {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)}
    roots.update(site.getsitepackages())
    roots.add(site.getusersitepackages())
    roots.add(str(Path(__file__).resolve().parents[2]))  # where solbench is imported from (src/)
    system = {*ROOT_SYSTEM_FOLDERS, *ROOT_SYSTEM_FILES} if keeps_root else set(SYSTEM_FOLDERS)
    if "/sys" in system:
        system = (system - {"/sys"}) | set(sys_without_cgroups())
    return sorted(r for r in roots | system if os.path.exists(r))


def sys_without_cgroups(root: str = "/sys") -> list[str]:
    """/sys's entries but its cgroup tree. An open cgroup folder is what `clone3(CLONE_INTO_CGROUP)` takes to start a
    child in another cgroup (the kernel checks only the folder's owner and mode, which a sandbox that keeps root
    passes): out of the sandbox's cgroup, the child is neither frozen while the reference is timed nor killed with
    the sandbox. Nothing a sandbox runs needs it; the parent manages the sandbox's cgroup."""
    kept = []
    for entry in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, entry)
        if entry != "fs":
            kept.append(path)
            continue
        kept.extend(os.path.join(path, name) for name in sorted(os.listdir(path)) if name != "cgroup")
    return kept


def device_paths(*, keeps_root: bool = False) -> list[str]:
    """What the sandbox may open under /dev: all of it, where device permissions keep `nobody` out of disks.

    As root, only the plain character devices and the GPU's: a disk opened raw holds every file.
    """
    if not keeps_root:
        return ["/dev"]
    import glob

    return [path for path in (*ROOT_DEVICES, *sorted(glob.glob(GPU_DEVICES))) if os.path.exists(path)]


def abi_version() -> int:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return max(int(libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))), 0)
    except (OSError, AttributeError):
        return 0


def confine(workdir: str, readable: list[str], devices: list[str], abi: int) -> bool:
    """Restrict this process (and what it execs) to `readable` for reading, `workdir` and `devices` for writing.

    Called in the forked child before exec: plain syscalls only, no allocation-heavy work. Returns
    False where Landlock is unavailable, leaving the process unconfined.
    """
    if abi < 1:
        return False
    handled = (
        READ_ONLY
        | WRITE_FILE
        | _MODIFY
        | (REFER if abi >= 2 else 0)
        | (TRUNCATE if abi >= 3 else 0)
        | (IOCTL_DEV if abi >= 5 else 0)
    )
    libc = ctypes.CDLL(None, use_errno=True)
    # With scoping, the sandbox and what it starts can signal (kill, tgkill, pidfd, SIGIO) and connect to abstract
    # sockets only within this ruleset's domain: not the evaluator, a server, or another sandbox of the same user.
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= SCOPE_ABI else 0
    attr = _RulesetAttr(handled, 0, scoped)
    size = ctypes.sizeof(attr) if scoped else ctypes.sizeof(ctypes.c_uint64)  # older kernels know one field
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    # Opened here, after fork: /proc/self is this child, which keeps its pid across exec.
    rules = [(path, READ_ONLY) for path in (*readable, *PROC_ENTRIES)]
    device_access = READ_ONLY | WRITE_FILE | (IOCTL_DEV if abi >= 5 else 0) | (TRUNCATE if abi >= 3 else 0)
    rules += [(workdir, handled), *((path, device_access) for path in devices)]
    for path, access in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= _FILE_RIGHTS  # a rule on a file may grant only file rights, or it is refused
        beneath = _PathBeneathAttr(access & handled, fd)
        libc.syscall(_ADD_RULE, ruleset, ctypes.c_int(_PATH_BENEATH), ctypes.byref(beneath), ctypes.c_uint32(0))
        os.close(fd)
    libc.prctl(_NO_NEW_PRIVS, 1, 0, 0, 0)
    restricted = libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) == 0
    os.close(ruleset)
    return restricted
