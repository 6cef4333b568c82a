"""Landlock confinement of a throwaway process, as `nobody` and as root: what stays readable and what does not."""

import os
import stat
import subprocess
import sys
import textwrap

import pytest

from conftest import make_solution
from solbench.evaluation import evaluate
from solbench.evaluation.confinement import _world_can_run
from solbench.evaluation.landlock import abi_version
from solbench.spec import load_problem

pytestmark = pytest.mark.slow  # each test starts confined processes or a sandbox


@pytest.mark.skipif(abi_version() < 1, reason="this kernel has no Landlock")
def test_confined_process_reads_only_what_it_needs(tmp_path):
    script = textwrap.dedent(f"""
        import os, torch
        from solbench.evaluation.landlock import abi_version, confine, device_paths, readable_roots
        assert confine({str(tmp_path)!r}, readable_roots(), device_paths(), abi_version())
        def readable(path):
            try:
                open(path, "rb").read(1)
                return True
            except PermissionError:
                return False
        assert readable("/proc/cpuinfo") and readable("/proc/self/status") and readable(torch.__file__)
        assert not readable("/proc/1/environ") and not readable("/proc/%d/status" % os.getppid())
        open({str(tmp_path / "written")!r}, "w").write("ok")
        for forbidden in ("/tmp/solbench-landlock-probe", {str(tmp_path.parent / "outside")!r}):
            try:
                open(forbidden, "w")
                raise SystemExit("wrote " + forbidden)
            except PermissionError:
                pass
        try:
            os.listdir("/")
            raise SystemExit("listed /")
        except PermissionError:
            pass
        print("confined")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "confined" in result.stdout, result.stderr[-2000:]
    assert (tmp_path / "written").read_text() == "ok"


def _block_device() -> str | None:
    """A disk's device node, which root could read raw (every file on it) unless Landlock refuses."""
    for entry in sorted(os.scandir("/dev"), key=lambda e: e.name):
        if stat.S_ISBLK(entry.stat(follow_symlinks=False).st_mode):
            return entry.path
    return None


@pytest.mark.skipif(abi_version() < 1, reason="this kernel has no Landlock")
def test_a_sandbox_that_keeps_root_reads_only_the_narrowed_set(tmp_path):
    """Run as whoever runs the tests: only the files this user may read without Landlock are tried, so each
    refusal below is Landlock's (as root, all of them; otherwise /etc/hostname and /dev/tty remain)."""
    private = [
        p
        for p in ("/etc/shadow", "/etc/hostname", "/proc/self/root/etc/shadow", _block_device(), "/dev/tty")
        if p and os.path.exists(p) and os.access(p, os.R_OK)
    ]
    assert private, "no file to try: every candidate is unreadable to this user anyway"
    script = textwrap.dedent(f"""
        import os, shutil, subprocess, sys, torch
        from solbench.evaluation.landlock import abi_version, confine, device_paths, readable_roots
        assert confine({str(tmp_path)!r}, readable_roots(keeps_root=True), device_paths(keeps_root=True),
                       abi_version())
        def readable(path):
            try:
                open(path, "rb").read(1)
                return True
            except PermissionError:
                return False
        for needed in ("/etc/ld.so.cache", "/etc/passwd", "/dev/urandom", torch.__file__, sys.executable):
            assert readable(needed), needed
        open("/dev/null", "w").write("ok")
        leaked = [path for path in {private!r} if readable(path)]
        assert not leaked, leaked
        for folder in ("/etc", "/var/lib", "/run", "/opt", "/dev"):
            try:
                os.listdir(folder)
                raise SystemExit("listed " + folder)
            except (PermissionError, FileNotFoundError):
                pass
        if shutil.which("c++"):  # /usr/bin/c++ links to g++ through /etc/alternatives, which needs no rule
            subprocess.run(["c++", "--version"], check=True, capture_output=True)
        print("narrowed")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "narrowed" in result.stdout, result.stderr[-2000:]


def test_the_trace_says_which_set_was_applied(vector_add_problem, fast_config):
    traces = evaluate(
        load_problem(vector_add_problem), make_solution("def run(x, y):\n    return x + y\n"), fast_config
    )
    filesystem = traces[0].evaluation.solbench.confinement["filesystem"]
    keeps_root = os.geteuid() == 0 and not _world_can_run(sys.executable)
    assert ("narrowed" in filesystem and "keeps root" in filesystem) == (keeps_root and abi_version() >= 1), filesystem
