"""`solbench` command line. Results go to stdout, progress and errors to stderr.

Exit statuses, the same for every command and what the process returns: 0 success; 1 a failed check
(a blocking finding, a failed tested workload, a replay that differs, a problem that could not be
evaluated) or a bug, the latter with a short traceback and a request to report it; 2 bad input
(SolbenchError or a usage error), one line on stderr; 130 interrupted.
"""

from __future__ import annotations

import inspect
import sys

import typer

from solbench.cli import (
    admin_commands,
    baseline_command,
    check_command,
    eval_command,
    export_commands,
    extract_command,
    hardware_commands,
    mcp_command,
    openenv_command,
    optimize_command,
    reach_command,
    replay_command,
    report_command,
    run_command,
    score_command,
    serve_command,
    sol_command,
    submit_command,
    suite_commands,
    template_command,
    test_command,
    validate_command,
    worker_command,
)
from solbench.errors import SolbenchError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure compute kernels against a PyTorch reference and the hardware's speed of light.",
)


def _help(command) -> str:
    """The docstring as paragraphs: single line breaks are joined so Rich wraps help at any width."""
    paragraphs = inspect.cleandoc(command.__doc__ or "").split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


for name, command in (
    ("eval", eval_command.evaluate_solution),
    ("sol", sol_command.speed_of_light),
    ("score", score_command.score_traces),
    ("check", check_command.check_solution_file),
    ("validate", validate_command.validate_problems),
    ("run", run_command.run_suite),
    ("baseline", baseline_command.measure_baselines),
    ("extract", extract_command.extract_module),
    ("mcp", mcp_command.serve_mcp),
    ("openenv-serve", openenv_command.serve_openenv),
    ("optimize", optimize_command.optimize_problem),
    ("test", test_command.test_solution),
    ("template", template_command.print_template),
    ("replay", replay_command.replay),
    ("report", report_command.report_runs),
    ("serve", serve_command.serve),
    ("submit", submit_command.submit),
    ("status", submit_command.status),
    ("worker", worker_command.run_worker),
    ("reach", reach_command.reach),
):
    app.command(name, help=_help(command))(command)
app.add_typer(hardware_commands.app, name="hw")
app.add_typer(suite_commands.app, name="suite")
app.add_typer(admin_commands.app, name="admin")
app.add_typer(export_commands.app, name="export")


@app.callback()
def _root() -> None:
    """Measure compute kernels against a PyTorch reference and the hardware's speed of light."""


def main() -> None:
    """Entry point: the one place where errors become exit statuses."""
    try:
        status = app(standalone_mode=False)
    except SolbenchError as error:
        print(f"solbench: error: {error}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("solbench: interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as error:  # a bug in solbench, not bad input
        # Usage errors come from Typer's (possibly vendored) Click: recognised by shape, not import.
        show = getattr(error, "show", None)
        if callable(show) and isinstance(getattr(error, "exit_code", None), int):
            show()
            sys.exit(2)
        if type(error).__name__ == "Abort":
            sys.exit(130)
        import traceback

        traceback.print_exception(type(error), error, error.__traceback__, limit=-3)
        print("solbench: internal error; please report it with the command you ran", file=sys.stderr)
        sys.exit(1)
    # Outside standalone mode Typer returns the code of an Exit (`typer.Exit(1)`, and Ctrl-C as Exit(130)) rather
    # than raising it. No command returns a value, so a number here is the status the command asked for.
    if status == 130:
        print("solbench: interrupted", file=sys.stderr)
    if isinstance(status, int) and status != 0:
        sys.exit(status)
