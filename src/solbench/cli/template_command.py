"""`solbench template`: the solution contract of a problem, or a template solution.json to start from."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from solbench.cli.common import DEFAULTS, PRECISION_HELP, Device, Precision


def print_template(
    problem_dir: Path = typer.Argument(
        ..., help="Problem folder holding definition.json and workload.jsonl (in a round folder: problem)."
    ),
    language: str | None = typer.Option(
        None, "--language", "-l", help="pytorch, triton, cpp or cuda: print that template instead of the instructions."
    ),
    style: str = typer.Option(
        "value", "--style", help="value (the entry returns the outputs) or dps (it writes into output buffers)."
    ),
    device: Device | None = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    precision: Precision = typer.Option(Precision(DEFAULTS.precision), "--precision", help=PRECISION_HELP),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write to this file instead of stdout."),
) -> None:
    """How to write a solution of a problem: without --language, the instructions (the solution.json schema, the
    entry point and both calling styles in the problem's own argument names, shapes and dtypes, the languages
    and how each is built, the tolerances and precision rule, what the static rules forbid, how to test); with
    --language, a template solution.json in that language and --style. The pytorch and triton templates pass as
    written; the cpp and cuda ones build and raise until their body is written."""
    from solbench.errors import SolbenchError
    from solbench.evaluation.config import resolve_device
    from solbench.optimize.instructions import problem_guide
    from solbench.spec import load_problem

    problem = load_problem(problem_dir)
    text = problem_guide(
        problem, resolve_device(device.value if device else DEFAULTS.device), precision.value, language, style
    )
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text)
    except OSError as error:
        raise SolbenchError(f"-o {output}: cannot write: {error.strerror or error}") from None
    print(f"wrote {output}", file=sys.stderr)
