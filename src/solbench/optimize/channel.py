"""How `solbench test` inside a round folder reaches the loop's env: request and response files.

The loop owns the env (and so the budget) in its own process; a second env in the agent's process
would need its own budget ledger and could disagree. So `solbench test solution.json` writes a
request into the round folder's `.solbench/requests/`, and the loop, which polls while the agent
runs, answers it through `env.test` and writes `.solbench/responses/<id>.json`. The budget stays in
one place and each test is journaled. `.solbench/serving.json` says a loop is listening; it is
removed when the round's agent ends, so a late request fails at once instead of waiting.

Both sides write a file under a temporary name and rename it, so neither reads half a message.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from solbench.optimize.loop_errors import TestChannelError
from solbench.optimize.workspace import write_json_atomically

CHANNEL_DIR = ".solbench"
SERVING_FILE = "serving.json"
WORKSPACE_VARIABLE = "SOLBENCH_WORKSPACE"
POLL_S = 0.05


class ChannelServer:
    """The loop's side: answers every pending request with `handle(request) -> response`."""

    def __init__(self, round_folder: Path, handle: Callable[[dict[str, Any]], dict[str, Any]]):
        self.root = Path(round_folder) / CHANNEL_DIR
        self.handle = handle

    def open(self, round_number: int) -> None:
        write_json_atomically(self.root / SERVING_FILE, {"pid": os.getpid(), "round": round_number})

    def close(self) -> None:
        (self.root / SERVING_FILE).unlink(missing_ok=True)

    def serve(self) -> None:
        requests = self.root / "requests"
        if not requests.is_dir():
            return
        for path in sorted(requests.glob("*.json")):
            request_id = path.stem
            try:
                request = json.loads(path.read_text())
            except (OSError, ValueError) as error:
                response = {"error": f"unreadable request: {error}"}
            else:
                response = self.handle(request if isinstance(request, dict) else {})
            write_json_atomically(self.root / "responses" / f"{request_id}.json", response)
            path.unlink(missing_ok=True)


def find_round_folder(start: Path, environment: dict[str, str]) -> Path:
    """$SOLBENCH_WORKSPACE, else the nearest folder from `start` upwards with a listening loop."""
    if environment.get(WORKSPACE_VARIABLE):
        return Path(environment[WORKSPACE_VARIABLE])
    for folder in [start, *start.parents]:
        if (folder / CHANNEL_DIR / SERVING_FILE).is_file():
            return folder
    raise TestChannelError(
        f"{start}: not inside a round folder of a running `solbench optimize` "
        f"(no {CHANNEL_DIR}/{SERVING_FILE} here or above, and ${WORKSPACE_VARIABLE} is unset)"
    )


def send_request(round_folder: Path, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """Write a request and wait for the loop's answer; raises TestChannelError when no loop answers."""
    root = Path(round_folder) / CHANNEL_DIR
    serving = root / SERVING_FILE
    if not serving.is_file():
        raise TestChannelError(
            f"{round_folder}: no `solbench optimize` round is listening there "
            f"(run `solbench test` from inside a round, while its agent runs)"
        )
    request_id = uuid.uuid4().hex
    response_path = root / "responses" / f"{request_id}.json"
    write_json_atomically(root / "requests" / f"{request_id}.json", request)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if response_path.is_file():
            response = json.loads(response_path.read_text())
            response_path.unlink(missing_ok=True)
            return response
        if not serving.is_file():
            raise TestChannelError(f"{round_folder}: the round ended before answering the test request")
        time.sleep(POLL_S)
    raise TestChannelError(f"{round_folder}: no answer from the loop within {timeout_s:.0f} s")
