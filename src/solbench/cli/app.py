"""`solbench` command line. Results go to stdout, progress and errors to stderr.

Bad input (SolbenchError) ends with one line on stderr and exit status 2; an interrupted run
with 130; a bug with a short traceback and a request to report it, exit 1.
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from solbench.errors import SolbenchError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Measure compute kernels against a PyTorch reference and the hardware's speed of light.")


@app.callback()
def _root() -> None:
    """Measure compute kernels against a PyTorch reference and the hardware's speed of light."""


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


class UsageError(SolbenchError):
    pass


def _default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@app.command("eval")
def eval_command(
    problem_dir: Path = typer.Argument(..., help="Problem folder holding definition.json and workload.jsonl."),
    solution: Optional[Path] = typer.Option(None, "--solution", "-s", help="Solution JSON file."),
    reference: bool = typer.Option(False, "--reference", help="Evaluate the reference itself as the solution."),
    json_output: bool = typer.Option(False, "--json", help="Print only a JSON array of traces on stdout."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds allowed for each sandbox request."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Append traces to this JSONL file."),
    device: Optional[Device] = typer.Option(None, "--device", help="cpu or cuda (default: cuda when present)."),
    rounds: int = typer.Option(3, "--rounds", help="Correctness rounds, each on fresh inputs."),
    budget: float = typer.Option(1.0, "--budget", help="Seconds of timed iterations per workload."),
    timer: Optional[str] = typer.Option(None, "--timer", help="cpu_monotonic, cuda_events or cuda_profiler."),
    memory_limit_gb: Optional[float] = typer.Option(None, "--memory-limit-gb",
                                                    help="Sandbox memory limit (default: half of RAM)."),
    data_root: list[Path] = typer.Option([], "--data-root", help="Folder to search for safetensors inputs."),
) -> None:
    """Evaluate a solution on every workload of a problem; one trace per workload."""
    from rich.console import Console

    from solbench.cli.render import status_counts, traces_table
    from solbench.evaluate import EvaluationConfig, default_memory_limit_bytes
    from solbench.sandbox import TimingPlan
    from solbench.spec import load_problem, load_solution, reference_solution

    if timeout <= 0 or rounds < 1 or budget < 0:
        raise UsageError("--timeout must be positive, --rounds at least 1, --budget not negative")
    if (solution is None) == (not reference):
        raise UsageError("give exactly one of --solution FILE or --reference")
    problem = load_problem(problem_dir)
    candidate = reference_solution(problem.definition) if reference else load_solution(solution)
    chosen_device = device.value if device else _default_device()
    if chosen_device == "cuda" and _default_device() != "cuda":
        raise UsageError("--device cuda: no CUDA device is available here")
    memory = int(memory_limit_gb * 2**30) if memory_limit_gb else default_memory_limit_bytes()
    config = EvaluationConfig(device=chosen_device, timeout_s=timeout, rounds=rounds,
                              timing=TimingPlan(budget_s=budget), timer=timer, memory_limit_bytes=memory,
                              data_roots=tuple(data_root))
    errors = Console(stderr=True)
    for warning in problem.warnings:
        errors.print(f"[yellow]warning:[/yellow] {warning}")
    traces = _evaluate_with_progress(problem, candidate, config, errors)
    if output is not None:
        _append_jsonl(output, traces)
    if json_output:
        sys.stdout.write(json.dumps([t.model_dump(mode="json") for t in traces]) + "\n")
        return
    console = Console()
    console.print(traces_table(traces, f"{problem.name} · {candidate.name} · {chosen_device}"))
    console.print(status_counts(traces))


def _evaluate_with_progress(problem, solution, config, console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from solbench.evaluate import evaluate

    if not console.is_terminal:
        def report(done: int, total: int, what: str) -> None:
            console.print(f"[{done}/{total}] {what}", highlight=False)
        return evaluate(problem, solution, config, report)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("starting", total=len(problem.workloads))

        def update(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, description=what)
        return evaluate(problem, solution, config, update)


def _append_jsonl(path: Path, traces) -> None:
    try:
        with path.open("a", encoding="utf-8") as handle:
            for trace in traces:
                handle.write(trace.model_dump_json() + "\n")
    except OSError as error:
        raise UsageError(f"{path}: cannot write traces: {error.strerror}") from None


def main() -> None:
    """Entry point: the one place where errors become exit statuses."""
    try:
        app(standalone_mode=False)
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
        if hasattr(error, "show") and isinstance(getattr(error, "exit_code", None), int):
            error.show()
            sys.exit(2)
        if type(error).__name__ == "Abort":
            sys.exit(130)
        import traceback

        traceback.print_exception(type(error), error, error.__traceback__, limit=-3)
        print("solbench: internal error; please report it with the command you ran", file=sys.stderr)
        sys.exit(1)
