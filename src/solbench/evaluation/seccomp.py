"""One seccomp filter for the sandbox: `clone3` answers ENOSYS, applied between fork and exec.

`clone3(CLONE_INTO_CGROUP)` starts a child straight in another cgroup, given a file descriptor of the cgroup's folder.
Landlock keeps the sandbox from reading the cgroup tree, but checks no `O_PATH` open, and `clone3` takes such a
descriptor: a sandbox that keeps root started a child in the root cgroup that way, neither frozen while the reference
was timed nor killed with the sandbox. A filter cannot read `clone3`'s arguments (they are in memory), so the call
is refused whole with ENOSYS, to which glibc (thread creation) answers by falling back to `clone`, which has no such
flag. x32 system-call numbers are refused too.
"""

from __future__ import annotations

import ctypes

CLONE3 = 435
"""On every architecture (the generic numbers every new call shares since Linux 5.3)."""
_X32 = 0x40000000
_ENOSYS = 38
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_LOAD_NR = 0x20  # BPF_LD | BPF_W | BPF_ABS, offset 0: seccomp_data.nr
_JUMP_IF_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_Instruction))]


def refuse_clone3() -> bool:
    """Install the filter on this process and what it starts; False where the kernel takes none (no seccomp)."""
    program = (_Instruction * 5)(
        _Instruction(_LOAD_NR, 0, 0, 0),
        _Instruction(_JUMP_IF_EQUAL, 2, 0, CLONE3),
        _Instruction(_JUMP_IF_EQUAL, 1, 0, _X32 | CLONE3),
        _Instruction(_RETURN, 0, 0, _ALLOW),
        _Instruction(_RETURN, 0, 0, _ERRNO | _ENOSYS),
    )
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # a filter needs it (or CAP_SYS_ADMIN)
    fprog = _Program(len(program), ctypes.cast(program, ctypes.POINTER(_Instruction)))
    return libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
