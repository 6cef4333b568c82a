"""`solbench submit` checks a solution's size against the limit the server publishes before it sends anything, and
shows a 413 (from a server that publishes none) as one line. The real app served by uvicorn from a thread, the
CLI in this process (fast tier)."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import solution_dict
from service.conftest import ADD, ThreadServer
from solbench.cli.app import main

PROBLEM = "vector_add_fp32"  # a problem of the sample suite (solbench.service.web.sample_data)
LIMIT = 256 * 1024
"""The default limits.max_body_bytes, which the in-process service keeps."""


class Recorded:
    """The app, recording each request's method and path; with `publishes_limits` False it answers GET /limits 404,
    as a server from before that route."""

    def __init__(self, app):
        self.app = app
        self.requests: list[tuple[str, str]] = []
        self.publishes_limits = True

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            self.requests.append((scope["method"], scope["path"]))
            if scope["path"] == "/api/v1/limits" and not self.publishes_limits:
                await send(
                    {"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"application/json")]}
                )
                await send({"type": "http.response.body", "body": b'{"detail": "Not Found"}'})
                return
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def served(in_process_service):
    from solbench.service.app import create_app

    recorded = Recorded(create_app(in_process_service.service, start_queue=False))
    with ThreadServer(recorded) as server:
        server.recorded = recorded
        yield server


@pytest.fixture
def recorded(served):
    served.recorded.requests.clear()
    served.recorded.publishes_limits = True
    return served.recorded


def _submit(monkeypatch, capsys, served, token: str, solution_file) -> tuple[int, str, str]:
    monkeypatch.setattr(
        sys,
        "argv",
        ["solbench", "submit", str(solution_file), "--problem", PROBLEM, "--server", served.url, "--token", token],
    )
    try:
        main()
        code = 0
    except SystemExit as stopped:
        code = stopped.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _encoded_size(solution: dict) -> int:
    """The submission's body as the client encodes it."""
    body = {"problem": PROBLEM, "solution": solution, "mode": "private"}
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


def _write(tmp_path, source: str) -> tuple:
    solution = solution_dict(source, definition=PROBLEM)
    path = tmp_path / "solution.json"
    path.write_text(json.dumps(solution))
    return path, solution


def test_the_server_publishes_its_body_limit(served):
    from solbench.service.client import ServiceClient

    with ServiceClient(served.url) as client:
        assert client.max_body_bytes() == LIMIT


def test_a_solution_over_the_limit_is_refused_before_anything_is_sent(
    in_process_service, served, recorded, tmp_path, monkeypatch, capsys
):
    path, solution = _write(tmp_path, ADD + "x = 1\n" * 50000)
    code, _, stderr = _submit(monkeypatch, capsys, served, in_process_service.admin, path)
    assert code == 2, stderr
    assert stderr == (
        f"solbench: error: {path}: {_encoded_size(solution)} bytes as a submission, over the limit of "
        f"{LIMIT} bytes of {served.url}; nothing was sent\n"
    )
    assert recorded.requests == [("GET", "/api/v1/limits")]


def test_a_server_that_publishes_no_limit_has_its_413_shown_as_one_line(
    in_process_service, served, recorded, tmp_path, monkeypatch, capsys
):
    recorded.publishes_limits = False
    path, solution = _write(tmp_path, ADD + "x = 1\n" * 50000)
    code, _, stderr = _submit(monkeypatch, capsys, served, in_process_service.admin, path)
    assert code == 2, stderr
    assert stderr == (
        f"solbench: error: {path}: too large for {served.url}: body: {_encoded_size(solution)} bytes is "
        f"over the limit of {LIMIT} bytes\n"
    )
    assert recorded.requests == [("GET", "/api/v1/limits"), ("POST", "/api/v1/submissions")]


def test_a_solution_within_the_limit_is_submitted(in_process_service, served, recorded, tmp_path, monkeypatch, capsys):
    path, _ = _write(tmp_path, ADD)
    code, stdout, stderr = _submit(monkeypatch, capsys, served, in_process_service.admin, path)
    assert code == 0, stderr
    assert stdout.startswith("submission ") and f"for {PROBLEM}, mode private" in stdout
    assert ("POST", "/api/v1/submissions") in recorded.requests
