"""Problems in the database: importing suites with versions, held-out workloads, T_SOL and T_b per workload.

A problem's version is the sha256 of its definition, its workloads and the bytes of its data files
(the result cache's `problem_material`), so any change makes a new version and the old one stays
for the results measured on it. Held-out workloads are derived per version from the server's
secret; they are stored here and never served.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from solbench.service.models import ImportedBaseline, ProblemVersion, ServedProblem, SolAnalysis, utcnow
from solbench.spec import Definition, Problem, Workload


@dataclass(frozen=True)
class CatalogImport:
    """What importing suite folders into the service's catalog did (not the SOL-ExecBench importer's report)."""

    problems: int
    new_versions: int
    suites: tuple[str, ...]


def version_hash(problem: Problem) -> str:
    from solbench.evaluation.result_cache import problem_material

    text = json.dumps(problem_material(problem), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def make_held_out(problem: Problem, secret: str, version: str, count: int) -> list[dict]:
    """`count` hidden workloads: public ones with their variable axes moved by up to a quarter, chosen and moved
    by a generator seeded from the server's secret and the version. Workloads that read data files are not
    varied (their tensors have fixed shapes); custom inputs are made from the axes, so they follow. A variation
    that breaks a constraint is skipped."""
    rng = random.Random(hashlib.sha256(f"{secret}:{version}".encode()).digest())
    candidates = [
        w
        for w in problem.workloads
        if w.axes and all(s.type in ("random", "scalar", "custom") for s in w.inputs.values())
    ]
    made: list[dict] = []
    seen = {tuple(sorted(w.axes.items())) for w in problem.workloads}
    for attempt in range(count * 8):
        if len(made) >= count or not candidates:
            break
        base = rng.choice(candidates)
        axes = {
            name: max(1, value + rng.randint(-max(1, value // 4), max(1, value // 4)))
            for name, value in base.axes.items()
        }
        if tuple(sorted(axes.items())) in seen:
            continue
        uuid = "held-out-" + hashlib.sha256(f"{secret}:{version}:{attempt}".encode()).hexdigest()[:16]
        workload = Workload.model_validate({**base.model_dump(mode="json"), "uuid": uuid, "axes": axes})
        if not _axes_allowed(problem, axes):
            continue
        seen.add(tuple(sorted(axes.items())))
        made.append(workload.model_dump(mode="json"))
    return made


def _axes_allowed(problem: Problem, axes: dict[str, int]) -> bool:
    """The definition resolves these axes and every constraint it can check on them holds."""
    from solbench.spec.expressions import evaluate, names_in

    try:
        resolved = problem.definition.resolve_axes(dict(axes))
    except ValueError:
        return False
    return all(evaluate(c, resolved) for c in problem.definition.constraints if names_in(c) <= set(resolved))


def import_suites(
    session_factory: sessionmaker[Session], suites: tuple[Path, ...], secret: str, held_out_per_problem: int
) -> CatalogImport:
    """Import every problem under `suites`: a new problem, or a new current version of a changed one."""
    from solbench.spec.problem import find_problem_folders, load_problem
    from solbench.spec.problem_set import problem_set

    count = new = 0
    for root in suites:
        for folder in find_problem_folders(root):
            problem = load_problem(folder)
            set_name = problem_set(problem.definition.tags, folder, root)
            new += import_problem(session_factory, problem, set_name, secret, held_out_per_problem)
            count += 1
    return CatalogImport(problems=count, new_versions=new, suites=tuple(str(s) for s in suites))


def import_problem(
    session_factory: sessionmaker[Session], problem: Problem, set_name: str, secret: str, held_out_per_problem: int
) -> bool:
    """Store `problem` as the current version of its name; True when that version is new."""
    digest = version_hash(problem)
    with session_factory.begin() as session:
        row = session.scalar(select(ServedProblem).where(ServedProblem.name == problem.name))
        if row is None:
            row = ServedProblem(name=problem.name, set_name=set_name)
            session.add(row)
            session.flush()
        row.set_name = set_name
        versions = session.scalars(select(ProblemVersion).where(ProblemVersion.problem_id == row.id)).all()
        existing = next((v for v in versions if v.version_hash == digest), None)
        for version in versions:
            version.is_current = version is existing
        if existing is not None:
            existing.source_dir = str(problem.root.resolve())
            return False
        session.add(
            ProblemVersion(
                problem_id=row.id,
                version_hash=digest,
                definition=problem.definition.model_dump(mode="json"),
                workloads=[w.model_dump(mode="json") for w in problem.workloads],
                held_out=make_held_out(problem, secret, digest, held_out_per_problem),
                source_dir=str(problem.root.resolve()),
                is_current=True,
            )
        )
        return True


def current_version(session: Session, name: str) -> ProblemVersion | None:
    return session.scalar(
        select(ProblemVersion)
        .join(ServedProblem)
        .where(ServedProblem.name == name, ProblemVersion.is_current.is_(True))
    )


def spec_problem(version: ProblemVersion, *, held_out: bool = False) -> Problem:
    """The solbench Problem of a stored version: its public workloads, or only its held-out ones."""
    definition = Definition.model_validate(version.definition)
    workloads = tuple(Workload.model_validate(w) for w in (version.held_out if held_out else version.workloads))
    return Problem(root=Path(version.source_dir), definition=definition, workloads=workloads)


def analyzer_version(hardware: str) -> str:
    """A hash of the analyzer's code and of the hardware's data: when either changes, T_SOL is derived again."""
    from solbench.evaluation.result_cache import source_hash
    from solbench.hardware import lookup

    return hashlib.sha256(f"{source_hash(('sol',))}\0{lookup(hardware)!r}".encode()).hexdigest()[:16]


def t_sol_for(session_factory: sessionmaker[Session], version_id: int, hardware: str) -> dict[str, float]:
    """T_SOL (ms) per workload uuid, public and held-out, of a version on `hardware`: analysed once, then stored."""
    analyzer = analyzer_version(hardware)
    with session_factory() as session:
        stored = session.scalar(
            select(SolAnalysis).where(
                SolAnalysis.problem_version_id == version_id,
                SolAnalysis.hardware == hardware,
                SolAnalysis.analyzer_version == analyzer,
            )
        )
        if stored is not None:
            return dict(stored.t_sol_ms)
        version = session.get(ProblemVersion, version_id)
        assert version is not None, "version ids come from stored rows"
        problem = spec_problem(version)
        problem = replace(problem, workloads=problem.workloads + spec_problem(version, held_out=True).workloads)
    from solbench.api import analyze

    analysis = analyze(problem, hardware)
    values = {result.workload.uuid: result.t_sol_ms for result in analysis}
    costs = {
        result.workload.uuid: {
            "flops": result.flops,
            "bytes": result.bytes,
            "memory_ms": result.t_memory_ms,
            "compute_ms": max(result.t_compute_ms.values(), default=0.0),
        }
        for result in analysis
    }
    from sqlalchemy.exc import IntegrityError

    try:
        with session_factory.begin() as session:
            session.add(
                SolAnalysis(
                    problem_version_id=version_id,
                    hardware=hardware,
                    analyzer_version=analyzer,
                    t_sol_ms=values,
                    costs=costs,
                )
            )
    except IntegrityError:  # another process stored the same analysis first
        pass
    return values


def import_baselines(session_factory: sessionmaker[Session], files: tuple[Path, ...]) -> int:
    """T_b entries of baselines files, replacing earlier ones of the same (definition, workload, hardware)."""
    from solbench.scoring import load_baselines

    count = 0
    with session_factory.begin() as session:
        existing = {(b.definition, b.workload, b.hardware): b for b in session.scalars(select(ImportedBaseline))}
        for path in files:
            for entry in load_baselines(Path(path)).entries():
                key = (entry.definition, entry.workload, entry.hardware)
                row = existing.get(key)
                if row is None:
                    row = ImportedBaseline(
                        definition=entry.definition,
                        workload=entry.workload,
                        hardware=entry.hardware,
                        latency_ms=entry.latency_ms,
                        source=entry.source,
                    )
                    session.add(row)
                    existing[key] = row
                elif row.latency_ms != entry.latency_ms or row.source != entry.source:
                    row.latency_ms, row.source, row.imported_at = entry.latency_ms, entry.source, utcnow()
                count += 1
    return count


def baselines_for(session: Session, definition: str, hardware: str) -> dict[str, float]:
    """T_b (ms) per workload uuid of `definition` on `hardware` from imported baselines."""
    rows = session.scalars(
        select(ImportedBaseline).where(
            ImportedBaseline.definition == definition, func.upper(ImportedBaseline.hardware) == hardware.upper()
        )
    )
    return {row.workload: row.latency_ms for row in rows}
