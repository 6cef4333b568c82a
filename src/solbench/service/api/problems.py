"""GET /problems and /problems/{name}: what can be submitted to, with T_SOL and T_b per public workload."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException
from sqlalchemy.orm import Session

from solbench.service import queries
from solbench.service.api.deps import service, session
from solbench.service.api.schemas import ProblemDetail, WorkloadInfo
from solbench.service.catalog import baselines_for, current_version, t_sol_for

router = APIRouter(tags=["problems"])


@router.get("/problems", response_model=list[queries.ProblemSummary])
def list_problems(db: Session = Depends(session)):
    return queries.list_problems(db)


@router.get("/problems/{name}", response_model=ProblemDetail, responses={404: {}})
def get_problem(name: str, db: Session = Depends(session), svc=Depends(service)) -> ProblemDetail:
    """The current version: definition, public workloads, and per workload T_SOL (derived once per version on the
    server's hardware, then stored) and T_b (imported baselines). Held-out workloads are never listed."""
    version = current_version(db, name)
    if version is None:
        raise HTTPException(404, f"problem {name!r}: no such problem (GET /api/v1/problems lists them)")
    hardware = svc.settings.hardware
    t_sol: dict[str, float] = {}
    error = None
    try:
        t_sol = t_sol_for(svc.session_factory, version.id, hardware)
    except Exception as failure:
        error = f"{type(failure).__name__}: {failure}"
    t_b = baselines_for(db, name, hardware)
    rows = [
        WorkloadInfo(uuid=w["uuid"], axes=w.get("axes", {}), t_sol_ms=t_sol.get(w["uuid"]), t_b_ms=t_b.get(w["uuid"]))
        for w in version.workloads
    ]
    return ProblemDetail(
        name=name,
        set=version.problem.set_name,
        version=version.version_hash,
        hardware=hardware,
        definition=version.definition,
        workloads=version.workloads,
        per_workload=rows,
        t_sol_error=error,
    )
