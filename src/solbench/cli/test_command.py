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
    seed: int | None = typer.Option(
        None, "--seed", min=0, help="Make the inputs from this seed (a failure's input_seed) to replay them."
    ),
    workload: str | None = typer.Option(
        None, "--workload", help="Test this public workload (uuid) instead of the smallest ones."
    ),
) -> None:
    """Correctness of a candidate on the problem's smallest public workloads (or `--workload`), from inside a
    `solbench optimize` round folder: answered by the loop's env and counted against the run's budget. Each
    status reports its input seed; `--seed` replays those inputs. Exit status 0 when every tested workload
    PASSED, 1 when one did not."""
    from solbench.errors import SolbenchError
    from solbench.optimize.channel import find_round_folder, send_request

    try:
        data = json.loads(solution.read_text())
    except (OSError, ValueError) as error:
        raise SolbenchError(f"{solution}: cannot read a solution: {error}") from None
    folder = find_round_folder(Path.cwd(), dict(os.environ))
    request = {"file": str(solution), "solution": data, "seed": seed, "workload": workload}
    response = send_request(folder, request, wait)
    if "error" in response:
        raise SolbenchError(f"{solution}: {response['error']}")
    result = response["result"]
    if json_output:
        sys.stdout.write(json.dumps(response) + "\n")
    else:
        for tested in result["workloads"]:
            detail = f" · {tested['failed_rule']}" if tested.get("failed_rule") else ""
            seeded = f" · input seed {tested['input_seed']}" if tested.get("input_seed") is not None else ""
            print(f"{tested['workload']}: {tested['status']}{detail}{seeded}")
            if tested.get("error"):
                print("  " + tested["error"].strip().replace("\n", "\n  "))
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
