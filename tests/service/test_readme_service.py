"""The README's five leaderboard commands work as written: serve, add-user, submit, two leaderboards.

They run in an empty folder holding only `examples/` (so the import is quick), with a free port in
place of 8000, fast evaluation settings handed down in $SOLBENCH_SERVICE_SETTINGS, and `solbench`
on PATH as this interpreter's module. `curl -s URL` is a GET of URL.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from service.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _service_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = re.split(r"^#{2,3} Leaderboard service$", text, maxsplit=1, flags=re.MULTILINE)[1]  # the tour's section
    return re.search(r"```bash\n(.+?)\n```", section, re.DOTALL).group(1).splitlines()


def test_the_readme_serve_add_user_submit_leaderboard_commands_work(tmp_path, probed_home):
    import httpx

    commands = _service_commands()
    assert len(commands) == 5 and commands[0] == "solbench serve &"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "solbench").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m solbench "$@"\n')
    (shim / "solbench").chmod(0o755)
    port = free_port()
    fast = {
        "workers": 1,
        "held_out_per_problem": 0,
        "allow_root_sandbox": True,
        "evaluation": {
            "device": "cpu",
            "rounds": 1,
            "budget_s": 0.02,
            "warmup_s": 0.0,
            "min_warmup": 1,
            "min_iterations": 3,
            "timeout_s": 60,
            "memory_limit_gb": 4,
        },
    }
    env = {
        **os.environ,
        **probed_home,
        "PATH": f"{shim}:{os.environ['PATH']}",
        "SOLBENCH_SERVICE_SETTINGS": json.dumps(fast),
        "SOLBENCH_SERVER": f"http://127.0.0.1:{port}",
    }
    server = subprocess.Popen(
        ["solbench", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    boards = []
    try:
        for command in commands[1:]:
            if command.startswith("curl -s "):
                boards.append(httpx.get(command.split()[-1].replace("8000", str(port)), timeout=30).json())
                continue
            done = subprocess.run(
                ["bash", "-c", f"{command}\nenv -0"], cwd=tmp_path, env=env, capture_output=True, timeout=300
            )
            assert done.returncode == 0, done.stderr.decode()
            exported = dict(item.split("=", 1) for item in done.stdout.decode().split("\0") if "=" in item)
            env["SOLBENCH_TOKEN"] = exported.get("SOLBENCH_TOKEN", "")  # what `export` set
    finally:
        server.terminate()
        output = server.communicate(timeout=60)[0]
    assert "data folder" in output and "examples" in output
    assert "sandboxes     user " in output and "processes: " in output and "signals: " in output
    totals, problem = boards
    assert totals["rows"][0]["user"] == "alice" and totals["rows"][0]["total"] > 0
    assert problem["entries"][0]["user"] == "alice" and problem["firsts"][0]["user"] == "alice"
