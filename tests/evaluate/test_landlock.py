"""Landlock confinement, applied to a throwaway process: what stays readable and what does not."""

import subprocess
import sys
import textwrap

import pytest

from solbench.evaluate.landlock import abi_version


@pytest.mark.skipif(abi_version() < 1, reason="this kernel has no Landlock")
def test_confined_process_reads_only_what_it_needs(tmp_path):
    script = textwrap.dedent(f"""
        import os, torch
        from solbench.evaluate.landlock import abi_version, confine, readable_roots
        assert confine({str(tmp_path)!r}, readable_roots(), abi_version())
        def readable(path):
            try:
                open(path, "rb").read(1)
                return True
            except PermissionError:
                return False
        assert readable("/proc/cpuinfo") and readable("/proc/self/status") and readable(torch.__file__)
        assert not readable("/proc/1/environ") and not readable("/proc/%d/status" % os.getppid())
        open({str(tmp_path / 'written')!r}, "w").write("ok")
        for forbidden in ("/tmp/solbench-landlock-probe", {str(tmp_path.parent / 'outside')!r}):
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
