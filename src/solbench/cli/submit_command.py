"""`solbench submit` and `solbench status`: the service's client side."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from solbench.service.client import DEFAULT_SERVER, SERVER_VARIABLE, TOKEN_VARIABLE

SERVER = typer.Option(None, "--server", help=f"Service URL (default ${SERVER_VARIABLE}, else {DEFAULT_SERVER}).")
CONNECT_WAIT_S = 120.0
"""A server that is still starting (importing its suite, probing the CPU) is waited for this long."""
TOKEN = typer.Option(None, "--token", help=f"API token (default ${TOKEN_VARIABLE}).")


def _client(server: str | None, token: str | None):
    from solbench.service.client import ServiceClient

    return ServiceClient(
        server or os.environ.get(SERVER_VARIABLE) or DEFAULT_SERVER,
        token or os.environ.get(TOKEN_VARIABLE),
        connect_wait_s=CONNECT_WAIT_S,
    )


def submit(
    solution: Path = typer.Argument(..., help="Solution JSON file."),
    problem: str = typer.Option(None, "--problem", help="Problem name (default: the solution's `definition`)."),
    server: str = SERVER,
    token: str = TOKEN,
    mode: str = typer.Option(
        "private",
        "--mode",
        help="test (correctness only), private (scored, yours only) or "
        "ranked (on the leaderboards, with held-out workloads).",
    ),
    wait: bool = typer.Option(False, "--wait", help="Wait for the result and print it."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Submit a solution to a leaderboard service. A solution over the server's size limit is refused before
    anything is sent (exit 2). Exit 1 when --wait sees the evaluation fail to run."""
    from solbench.cli.common import UsageError
    from solbench.spec import load_solution

    if mode not in ("test", "private", "ranked"):
        raise UsageError(f"--mode {mode}: use test, private or ranked")
    if not (token or os.environ.get(TOKEN_VARIABLE)):
        raise UsageError(
            f"--token: none given (pass --token or set ${TOKEN_VARIABLE}; `solbench admin add-user NAME` prints one)"
        )
    loaded = load_solution(solution)  # a malformed file fails here, naming its field
    data = json.loads(solution.read_text())
    with _client(server, token) as client:
        accepted = _send(client, solution, problem or loaded.definition, data, mode)
        if not wait:
            print(
                json.dumps(accepted)
                if json_output
                else f"submission {accepted['id']} {accepted['status']} (queue position {accepted['queue_position']}) "
                f"for {accepted['problem']}, mode {accepted['mode']}: {client.server}{accepted['url']}"
            )
            return
        if not json_output:
            print(f"submission {accepted['id']} queued for {accepted['problem']}; waiting", file=sys.stderr)
        view = client.wait(accepted["id"])
    _show(view, json_output)


def _send(client, path: Path, problem: str, data: dict, mode: str) -> dict:
    """Submit, naming the file when it is too large: seen before sending (the server's published limit), or answered
    413 by a server that publishes none."""
    from solbench.service.errors import BodyTooLarge, ServerRefused, ServiceError

    try:
        return client.submit(problem, data, mode=mode)
    except BodyTooLarge as error:
        raise ServiceError(
            f"{path}: {error.size_bytes} bytes as a submission, over the limit of {error.limit_bytes} "
            f"bytes of {error.server}; nothing was sent"
        ) from None
    except ServerRefused as error:
        if error.status != 413:
            raise
        raise ServiceError(f"{path}: too large for {client.server}: {error.message}") from None


def status(
    submission_id: int = typer.Argument(..., help="Submission id (printed by solbench submit)."),
    server: str = SERVER,
    token: str = TOKEN,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Show a submission's status and, once it finished, its score and verdict."""
    with _client(server, token) as client:
        view = client.submission(submission_id)
    _show(view, json_output)


def _show(view: dict, json_output: bool) -> None:
    if json_output:
        print(json.dumps(view))
    else:
        result = view.get("result")
        line = f"submission {view['id']} ({view['problem']}, {view['mode']}, by {view['user']}): {view['status']}"
        if view["status"] == "queued":
            line += f", queue position {view['queue_position']}"
        if result:
            score = "unscored" if result["score"] is None else f"S {result['score']:.4f}"
            line += (
                f", {result['verdict']}, {score} on {result['hardware']} (harness {result['harness_version']}"
                f"{', cache hit' if result['cache_hit'] else ''})"
            )
        if view.get("error") and view["status"] == "failed":
            line += f": {view['error']}"
        print(line)
    if view["status"] == "failed":
        sys.exit(1)
