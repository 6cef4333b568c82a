"""`solbench test`: inside a round folder, check a candidate's correctness through the running loop's env."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from solbench.optimize.run_settings import DEFAULT_TEST_TIMEOUT_S


def test_solution(
    solution: Path = typer.Argument(Path("solution.json"), help="Solution JSON (default: ./solution.json)."),
    wait: float = typer.Option(DEFAULT_TEST_TIMEOUT_S, "--wait", min=1, help="Seconds to wait for the loop's answer."),
    json_output: bool = typer.Option(False, "--json", help="Print only the result as JSON on stdout."),
) -> None:
    """Correctness of a candidate on the problem's smallest public workloads, from inside a `solbench optimize`
    round folder: answered by the loop's env and counted against the run's budget. Exit status 0 when every
    tested workload PASSED, 1 when one did not."""
    from solbench.errors import SolbenchError
    from solbench.optimize.channel import find_round_folder, send_request

    try:
        data = json.loads(solution.read_text())
    except (OSError, ValueError) as error:
        raise SolbenchError(f"{solution}: cannot read a solution: {error}") from None
    folder = find_round_folder(Path.cwd(), dict(os.environ))
    response = send_request(folder, {"file": str(solution), "solution": data}, wait)
    if "error" in response:
        raise SolbenchError(f"{solution}: {response['error']}")
    result = response["result"]
    if json_output:
        sys.stdout.write(json.dumps(response) + "\n")
    else:
        for workload in result["workloads"]:
            detail = f" · {workload['failed_rule']}" if workload.get("failed_rule") else ""
            print(f"{workload['workload']}: {workload['status']}{detail}")
            if workload.get("error"):
                print("  " + workload["error"].strip().replace("\n", "\n  "))
        left = response.get("budget_left", {})
        tests = left.get("tests")
        print(
            ("passed" if result["passed"] else "failed")
            + f" · {result['seconds']:.1f} s"
            + (" · cached" if result.get("cache_hit") else "")
            + ("" if tests is None else f" · {tests} test(s) left")
        )
    if not result["passed"]:
        raise typer.Exit(1)
