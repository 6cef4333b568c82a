"""`solbench suite import`: SOL-ExecBench's data set -> problem folders every solbench command reads.

Each problem is written (writer.py), then loaded by solbench's own loader, so the report says exactly
what solbench will read: what upstream's schema ignores and solbench ignores with it (load_notes),
safetensors inputs not on disk, problems that do not load. Published figures (metadata.json) become
DIR/baselines.json, and each problem gets a CPU tier where one can be derived (the reference runs on its
workloads, shape-only where it allows, to check them). Nothing is evaluated here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from solbench.errors import SolbenchError
from solbench.scoring.baselines import Baseline, save_baselines
from solbench.spec.errors import MissingDataError
from solbench.spec.problem import Problem, find_data_file, load_problem
from solbench.spec.tiers import CPU_WORKLOAD_FILE
from solbench.spec.workload import SafetensorsInput
from solbench.suite.importer.errors import ImportSourceError
from solbench.suite.importer.published import published_baselines
from solbench.suite.importer.report import BASELINES_FILE, REPORT_FILE, ImportNote, ImportReport, SetCount
from solbench.suite.importer.sources import UpstreamProblem, read_source
from solbench.suite.importer.writer import SET_NAMES, folder_name, set_name, write_problem

HARNESS = "solbench suite import"


def import_benchmark(
    source: Path | str,
    output: Path | str,
    *,
    revision: str | None = None,
    data_roots: tuple[Path, ...] = (),
    cpu_tier: bool = True,
    progress: Callable[[int, int, str], None] | None = None,
) -> ImportReport:
    """Convert the data set at `source` into problem folders under `output`; write baselines.json (where
    published figures exist) and import-report.json; return the report.

    With `cpu_tier`, each problem that loads also gets its CPU tier (``workload.cpu.jsonl``, small workloads
    derived from the published ones: suite/tiers.py), so it evaluates on this machine; where it has none a
    ``no-cpu-tier`` note says why (none needed, or none can be derived), and where derived workloads on which
    the reference disagreed with the definition were derived again or dropped, a ``cpu-tier-adjusted`` note.
    `progress(done, total, label)` follows the problems.

    Raises ImportSourceError when the source cannot be read; a problem that does not load is a
    ``load-error`` note, the others are still written.
    """
    source, output = Path(source), Path(output)
    upstream = read_source(source)
    if not upstream:
        raise ImportSourceError(f"{source}: no problems in this data set")
    output.mkdir(parents=True, exist_ok=True)
    roots = tuple(data_roots)  # where later commands look too (with the same --data-root): the report must agree
    notes: list[ImportNote] = []
    baselines: list[Baseline] = []
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    places: dict[Path, str] = {}
    names: dict[str, str] = {}
    for index, problem in enumerate(upstream):
        set_ = set_name(problem.subset)
        folder = output / set_ / folder_name(problem)
        if progress:
            progress(index, len(upstream), f"{set_}/{folder.name}")
        if folder in places:
            raise ImportSourceError(
                f"{problem.source}: writes the same folder {folder} as {places[folder]} (same subset and name)"
            )
        places[folder] = problem.source
        write_problem(problem, folder, set_)
        found, entries, loaded = _check_imported(problem, folder, set_, roots, names, revision)
        notes += found
        baselines += entries
        if cpu_tier and loaded is not None:
            notes += _cpu_tier(problem, folder, f"{set_}/{folder.name}")
        tally = counts[(set_, problem.subset)]
        tally[0] += 1
        tally[1] += len(loaded.workloads) if loaded else 0
        tally[2] += len(entries)
    baselines_path = output / BASELINES_FILE
    if not baselines and baselines_path.exists():
        baselines_path.unlink()  # an earlier import's figures would be read as this one's
    if baselines:
        save_baselines(
            baselines_path,
            baselines,
            created=_now(),
            harness_version=HARNESS,
            hardware_description="B200 at 1500 MHz (SOL-ExecBench's published figures)",
        )
    report = ImportReport(
        source=str(source),
        output=str(output),
        revision=revision or _revision(upstream),
        sets=[
            SetCount(set=s, subset=u, problems=p, workloads=w, published_workloads=b)
            for (s, u), (p, w, b) in counts.items()
        ],
        problems=len(upstream),
        workloads=sum(w for _, w, _ in counts.values()),
        baselines_file=str(baselines_path) if baselines else None,
        notes=notes,
    )
    (output / REPORT_FILE).write_text(json.dumps(report.as_json(), indent=1) + "\n", encoding="utf-8")
    return report


def _check_imported(
    problem: UpstreamProblem,
    folder: Path,
    set_: str,
    roots: tuple[Path, ...],
    names: dict[str, str],
    revision: str | None,
) -> tuple[list[ImportNote], list[Baseline], Problem | None]:
    """Load a written folder as every command will: its notes, its published baselines entries, and the
    loaded problem (None, with a load-error note, where solbench refuses it). `names` collects definition
    names already imported, for name clashes."""
    label = f"{set_}/{folder.name}"
    notes = []
    if problem.subset not in SET_NAMES and problem.subset not in SET_NAMES.values():
        notes.append(
            _note(
                "unknown-subset",
                label,
                problem,
                folder / "definition.json",
                f"subset {problem.subset!r} is not one of {', '.join(SET_NAMES)}; set {set_!r}",
            )
        )
    try:
        loaded = load_problem(folder, "gpu")  # the published workloads, whatever this machine is
    except SolbenchError as error:
        notes.append(
            _note(
                "load-error",
                label,
                problem,
                getattr(error, "path", None) or folder,
                str(error),
                field=getattr(error, "field", None),
                lines=_lines(error),
            )
        )
        return notes, [], None
    notes += _load_notes(loaded, label, problem) + _missing_data(loaded, label, problem, roots)
    if loaded.name in names:
        notes.append(
            _note(
                "name-clash",
                label,
                problem,
                folder / "definition.json",
                f"definition name {loaded.name!r} is also {names[loaded.name]}'s",
                field="name",
            )
        )
    names.setdefault(loaded.name, label)
    entries, why_not = published_baselines(loaded, problem.metadata, revision)
    if why_not:
        notes.append(_note("published-figures", label, problem, folder / "metadata.json", why_not))
    return notes, entries, loaded


def _load_notes(problem: Problem, label: str, upstream: UpstreamProblem) -> list[ImportNote]:
    return [
        ImportNote(
            kind=note.kind,
            problem=label,
            file=str(note.path),
            lines=list(note.lines),
            field=note.field,
            message=note.reason,
            source=upstream.source,
        )
        for note in problem.notes
    ]


def _missing_data(problem: Problem, label: str, upstream: UpstreamProblem, roots: tuple[Path, ...]) -> list[ImportNote]:
    """One note per input whose safetensors files are missing: the lines, how many files, the first one."""
    missing: dict[str, tuple[list[int], set[str]]] = {}
    for line, workload in enumerate(problem.workloads, start=1):
        for name, spec in workload.inputs.items():
            if isinstance(spec, SafetensorsInput):
                try:
                    find_data_file(problem, spec.path, roots)
                except MissingDataError:
                    lines, files = missing.setdefault(name, ([], set()))
                    lines.append(line)
                    files.add(spec.path)
    return [
        _note(
            "missing-data",
            label,
            upstream,
            problem.root / "workload.jsonl",
            f"{len(files)} safetensors file(s) not found, e.g. {sorted(files)[0]}; `solbench suite fetch "
            "sol-execbench` downloads them (FlashInfer trace data set), or pass --data-root",
            field=f"inputs.{name}.path",
            lines=lines,
        )
        for name, (lines, files) in missing.items()
    ]


def _cpu_tier(problem: UpstreamProblem, folder: Path, label: str) -> list[ImportNote]:
    from solbench.suite.tiers import derive_cpu_tier

    try:
        result = derive_cpu_tier(folder, write=True)
    except SolbenchError as error:
        return [_note("no-cpu-tier", label, problem, getattr(error, "path", None) or folder, str(error))]
    if result.action == "skipped":
        return [_note("no-cpu-tier", label, problem, folder / "workload.jsonl", result.reason)]
    if result.action == "not needed":
        message = f"published workloads already small: used as they are, `--tier cpu` included ({result.reason})"
        return [_note("no-cpu-tier", label, problem, folder / "workload.jsonl", message)]
    if result.adjusted:
        return [_note("cpu-tier-adjusted", label, problem, folder / CPU_WORKLOAD_FILE, result.adjusted)]
    return []


def _note(
    kind: str,
    label: str,
    problem: UpstreamProblem,
    file: Path | str,
    message: str,
    *,
    field: str | None = None,
    lines: list[int] | None = None,
) -> ImportNote:
    return ImportNote(
        kind=kind, problem=label, file=str(file), lines=lines or [], field=field, message=message, source=problem.source
    )


def _lines(error: Exception) -> list[int]:
    line = getattr(error, "line", None)
    return [line] if isinstance(line, int) else []


def _revision(problems: list[UpstreamProblem]) -> str | None:
    for problem in problems:
        source = (problem.metadata or {}).get("source")
        if isinstance(source, dict) and source.get("resolved_sha"):
            return str(source["resolved_sha"])
    return None


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds")
