"""`solbench eval`: evaluate a solution on every workload of a problem."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from solbench.cli.common import Device, UsageError, default_device, flag_error


def evaluate_solution(
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
    hardware: Optional[str] = typer.Option(None, "--hardware", "-H",
                                           help="Add T_SOL and the SOL score on this hardware to each trace."),
    baselines: Optional[Path] = typer.Option(None, "--baselines", help="Baselines JSON for the SOL score."),
) -> None:
    """Evaluate a solution on every workload of a problem; one trace per workload."""
    from rich.console import Console

    from solbench.cli.render import status_counts, traces_table
    from solbench.evaluate import EvaluationConfig, HarnessOptionError, default_memory_limit_bytes
    from solbench.evaluate.config import check_device_available
    from solbench.sandbox import TimingPlan
    from solbench.spec import load_problem, load_solution, reference_solution

    if (solution is None) == (not reference):
        raise UsageError("give exactly one of --solution FILE or --reference")
    chosen_device = device.value if device else default_device()
    memory = int(memory_limit_gb * 2**30) if memory_limit_gb else default_memory_limit_bytes()
    try:  # every harness option is checked before anything runs: a bad one is exit 2, with no trace
        config = EvaluationConfig(device=chosen_device, timeout_s=timeout, rounds=rounds,
                                  timing=TimingPlan(budget_s=budget), timer=timer, memory_limit_bytes=memory,
                                  data_roots=tuple(data_root))
        check_device_available(chosen_device)
    except HarnessOptionError as error:
        raise flag_error(error, {"device": ("--device", chosen_device), "timeout_s": ("--timeout", timeout),
                                 "rounds": ("--rounds", rounds), "timing.budget_s": ("--budget", budget),
                                 "timer": ("--timer", timer), "memory_limit_bytes": ("--memory-limit-gb",
                                                                                     memory_limit_gb)}) from None
    problem = load_problem(problem_dir)
    candidate = reference_solution(problem.definition) if reference else load_solution(solution)
    errors = Console(stderr=True)
    for warning in problem.warnings:
        errors.print(f"[yellow]warning:[/yellow] {warning}")
    sol_hardware = _sol_hardware(hardware, chosen_device, errors)
    traces = _evaluate_with_progress(problem, candidate, config, errors)
    if sol_hardware is not None:
        from solbench.evaluate.sol_scoring import attach_sol
        from solbench.score import load_baselines

        traces = attach_sol(traces, problem, sol_hardware, load_baselines(baselines) if baselines else None,
                            tuple(data_root))
    if output is not None:
        _append_jsonl(output, traces)
    if json_output:
        sys.stdout.write(json.dumps([t.model_dump(mode="json") for t in traces]) + "\n")
        return
    console = Console()
    console.print(traces_table(traces, f"{problem.name} · {candidate.name} · {chosen_device}"))
    console.print(status_counts(traces))


def _sol_hardware(hardware: str | None, device: str, console):
    """Look the hardware up before evaluating (a typo fails fast); warn when it is not where the run happens."""
    if hardware is None:
        return None
    from solbench.hardware import lookup

    spec = lookup(hardware)
    if (spec.kind == "cpu") != (device == "cpu"):
        console.print(f"[yellow]warning:[/yellow] scoring a {device} run against {spec.id} ({spec.kind}): "
                      "T_SOL describes other hardware than the one measured")
    return spec


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


