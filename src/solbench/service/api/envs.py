"""/envs: the optimisation environment over HTTP, one user's envs, their calls run by the submissions' workers.

A call that evaluates (the env's first, which makes its card; step; test; finalize) is queued as a job and
the request waits for it: up to `?wait=` seconds (default 30, at most 120), then 200 with the library's
answer, or 202 with the call's URL, which waits again the same way. A client loops on the 202s and feels
one synchronous call; the waiting holds no server thread (it polls the database from the event loop), and
a user's waiting requests are capped (`limits.max_waiting_env_requests`, checked before anything is queued).
Another user's env answers 404, as one that does not exist.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from solbench.evaluation.config import EvaluationConfig
from solbench.optimize import (
    Budget,
    FinalResult,
    InvalidBudget,
    InvalidReward,
    OptimizeError,
    ProblemCard,
    StepResult,
    TestResult,
)
from solbench.optimize.rewards import check_reward
from solbench.service.agent_envs import (
    ACTIVE,
    FINISHED,
    CallInProgress,
    CallKind,
    EnvFinalized,
    EnvGone,
    Refusal,
    create_env,
    final_as_served,
    finalize_call,
    open_env,
    owned_env,
    queue_call,
    reset_card,
)
from solbench.service.api.deps import current_user, service, session
from solbench.service.api.env_schemas import (
    CallView,
    CandidateRequest,
    EnvCreated,
    EnvRequest,
    EnvView,
    ResetRequest,
    TestRequest,
)
from solbench.service.catalog import current_version
from solbench.service.door import Refused, check_static, parse_solution
from solbench.service.limits import LimitReached, WaitSlot, check_env_limits
from solbench.service.models import AgentEnv, EnvCall, User
from solbench.service.queries import MAX_ROW_ID
from solbench.service.settings import Limits

router = APIRouter(tags=["envs"])
DEFAULT_WAIT_S = 30.0
MAX_WAIT_S = 120.0
WAIT = Query(DEFAULT_WAIT_S, ge=0, le=MAX_WAIT_S, description="Seconds to wait for the call's answer before a 202.")
PENDING = {202: {"model": CallView, "description": "still queued or running: ask its url"}}
REFUSED = {
    404: {},
    409: {"description": "budget spent, another call of this env running, or the env finalized"},
    422: {},
    429: {},
    500: {"description": "the library refused the env's stored state (not the candidate's fault): `error` names why"},
}


@router.post("/envs", status_code=201, response_model=EnvCreated, responses={**PENDING, **REFUSED})
async def make_env(
    body: EnvRequest, wait: float = WAIT, user: User = Depends(current_user), svc=Depends(service)
) -> JSONResponse:
    """`solbench.make` on the server: a new env of yours (201 with its id and card; T_SOL and T_b are worked out
    once, by a worker, on the server's hardware)."""
    with _wait_slot(svc, user, wait):
        _, call_id = await run_in_threadpool(_make, svc, user, body)
        if svc.queue is not None:
            svc.queue.submit_env_call(call_id)
        return await _answer(svc, call_id, wait)


@router.get("/envs/{env_id}", response_model=EnvView, responses={404: {}})
def get_env(
    env_id: int, user: User = Depends(current_user), db: Session = Depends(session), svc=Depends(service)
) -> EnvView:
    """History, best, budget left and card: what `env.history`, `env.best` and `env.budget_left` say."""
    row = _owned(db, env_id, user)
    device = row.card["device"] if row.card else svc.settings.evaluation.device
    env = open_env(row, EvaluationConfig(device=device))
    active = db.scalar(select(EnvCall).where(EnvCall.env_id == row.id, EnvCall.status.in_(ACTIVE)).limit(1))
    left = env.budget_left
    finalized = finalize_call(db, row.id) is not None
    return EnvView(
        id=row.id,
        problem=env.problem,
        problem_version=row.problem_version.version_hash,
        hardware=row.hardware,
        reward=row.reward,
        budget=row.budget,
        budget_left=left,
        done=left.exhausted or finalized,
        finalized=finalized,
        card=ProblemCard.model_validate(row.card) if row.card is not None else None,
        history=env.history,
        best=env.best,
        active_call=_view(active) if active is not None else None,
        created_at=row.created_at,
    )


@router.post("/envs/{env_id}/reset", responses={200: {"model": dict}, **REFUSED})
def reset_env(
    env_id: int,
    body: ResetRequest | None = None,
    user: User = Depends(current_user),
    db: Session = Depends(session),
    svc=Depends(service),
) -> JSONResponse:
    """`env.reset(seed)`: the card, with the budget left; history, best and budget stay the env's. Nothing is
    evaluated, but it counts as a call in the rate limits (409 while another call of the env is queued or
    running, the env's first one, which makes its card, included)."""
    row = _owned(db, env_id, user)
    _check_limits(db, user, svc.settings.limits, new_env=False, queues=False)
    try:
        card = reset_card(db, row, body.seed if body is not None else None)
    except CallInProgress as error:
        raise HTTPException(409, str(error)) from None
    except EnvGone as error:
        raise HTTPException(404, str(error)) from None
    if card is None:
        raise HTTPException(409, f"env {env_id}: its first call made no card (GET /api/v1/envs/{env_id}); make another")
    db.commit()
    return JSONResponse(card)


@router.post("/envs/{env_id}/step", response_model=StepResult, responses={**PENDING, **REFUSED})
async def step(
    env_id: int, body: CandidateRequest, wait: float = WAIT, user: User = Depends(current_user), svc=Depends(service)
) -> JSONResponse:
    """`env.step(solution)`: the candidate measured on the public workloads; the StepResult."""
    return await _call(svc, user, env_id, "step", body.solution, wait)


@router.post("/envs/{env_id}/test", response_model=TestResult, responses={**PENDING, **REFUSED})
async def test(
    env_id: int, body: TestRequest, wait: float = WAIT, user: User = Depends(current_user), svc=Depends(service)
) -> JSONResponse:
    """`env.test(solution, seed=, workload=)`: correctness only, on the smallest public workloads (or `workload`),
    from a fresh secret seed (or `seed`, to replay a failure's inputs); the TestResult."""
    arguments = {"seed": body.seed, "workload": body.workload}
    return await _call(svc, user, env_id, "test", body.solution, wait, arguments)


@router.post("/envs/{env_id}/finalize", response_model=FinalResult, responses={**PENDING, **REFUSED})
async def finalize(
    env_id: int, wait: float = WAIT, user: User = Depends(current_user), svc=Depends(service)
) -> JSONResponse:
    """`env.finalize()`, once per env: the best candidate re-measured on every workload of the env, its held-out
    ones included. Those are the env's own split of the problem's public workloads (the library's rule), never
    the service's secret held-out set that ranked submissions meet. The FinalResult, without traces and without
    the held-out workloads' error text; after it the env takes no step or test (409), and a second finalize
    answers the first's result without measuring again."""
    return await _call(svc, user, env_id, "finalize", None, wait)


@router.get("/envs/{env_id}/calls/{call_id}", responses={200: {"model": dict}, **PENDING, **REFUSED})
async def get_call(
    env_id: int, call_id: int, wait: float = WAIT, user: User = Depends(current_user), svc=Depends(service)
) -> JSONResponse:
    """A call's answer, as its POST would have given it: waits up to `wait` seconds, then 202 again."""

    def check() -> None:
        with svc.session_factory() as db:
            call = db.get(EnvCall, call_id) if 0 < call_id <= MAX_ROW_ID else None
            if call is None or call.env_id != env_id or owned_env(db, env_id, user) is None:
                raise HTTPException(404, f"env {env_id}: no call {call_id}")

    await run_in_threadpool(check)
    with _wait_slot(svc, user, wait):
        return await _answer(svc, call_id, wait)


async def _call(
    svc,
    user: User,
    env_id: int,
    kind: CallKind,
    solution: dict[str, Any] | None,
    wait: float,
    arguments: dict[str, Any] | None = None,
):
    with _wait_slot(svc, user, wait):
        try:
            call_id, queued = await run_in_threadpool(_queue, svc, user, env_id, kind, solution, arguments)
        except OptimizeError as error:  # the library's ledger allows no such call: nothing queued
            return _refusal_response(Refusal.of(error).as_json())
        if queued and svc.queue is not None:
            svc.queue.submit_env_call(call_id)
        return await _answer(svc, call_id, wait)


def _make(svc, user: User, body: EnvRequest) -> tuple[int, int]:
    settings = svc.settings
    hardware = body.hardware or settings.hardware
    if hardware.upper() != settings.hardware.upper():
        raise Refused("hardware", f"{hardware!r}: this server's workers measure on {settings.hardware!r}")
    try:
        reward = check_reward(body.reward)
        budget = Budget(evals=body.budget_evals, tests=body.budget_tests, seconds=body.budget_seconds)
    except InvalidReward as error:
        raise Refused("reward", str(error).removeprefix("reward: ")) from None
    except InvalidBudget as error:
        raise Refused(f"budget_{error.field}", str(error)) from None
    with svc.session_factory() as db:
        version = current_version(db, body.problem)
        if version is None:
            raise Refused("problem", f"unknown problem {body.problem!r} (GET /api/v1/problems lists them)")
        _check_limits(db, user, settings.limits, new_env=True)
        row, call = create_env(db, user, version, hardware=settings.hardware, reward=reward, budget=budget)
        db.commit()
        return row.id, call.id


def _queue(
    svc, user: User, env_id: int, kind: CallKind, solution: dict[str, Any] | None, arguments: dict[str, Any] | None
) -> tuple[int, bool]:
    """The call's id, and whether it was queued now (a finalized env's finalize is its first, answered)."""
    with svc.session_factory() as db:
        row = _owned(db, env_id, user)
        if solution is not None:
            parsed = parse_solution(solution, row.problem_version.problem.name)
            check_static(parsed)
            solution = parsed.model_dump(mode="json", exclude_none=True)
        _check_limits(db, user, svc.settings.limits, new_env=False)
        try:
            call = queue_call(db, row, kind, solution, arguments)
        except (CallInProgress, EnvFinalized) as error:
            raise HTTPException(409, str(error)) from None
        except EnvGone as error:
            raise HTTPException(404, str(error)) from None
        db.commit()
        return call.id, call.status == "queued"


def _check_limits(db: Session, user: User, limits: Limits, *, new_env: bool, queues: bool = True) -> None:
    try:
        check_env_limits(db, user, limits, new_env=new_env, queues=queues)
    except LimitReached as error:
        raise _too_many(error) from None


def _wait_slot(svc, user: User, wait_s: float) -> WaitSlot:
    """A place among the user's waiting requests, taken before anything is queued: a 429 leaves nothing behind."""
    try:
        return svc.waiting.enter(user, wait_s)
    except LimitReached as error:
        raise _too_many(error) from None


def _too_many(error: LimitReached) -> HTTPException:
    retry = {"Retry-After": str(error.retry_after_s)} if error.retry_after_s is not None else None
    return HTTPException(429, str(error), headers=retry)


def _owned(db: Session, env_id: int, user: User) -> AgentEnv:
    row = owned_env(db, env_id, user)
    if row is None:
        raise HTTPException(404, f"env {env_id}: no such env")
    return row


@dataclass(frozen=True)
class _CallState:
    call: CallView
    result: dict[str, Any] | None
    refusal: dict[str, Any] | None
    makes_env: bool
    """The env's first call, which made its card: its answer is POST /envs's."""


def _read(session_factory, call_id: int) -> _CallState:
    with session_factory() as db:
        call = db.get(EnvCall, call_id)
        assert call is not None, "the call was made or checked before"
        first = db.scalar(select(func.min(EnvCall.id)).where(EnvCall.env_id == call.env_id))
        return _CallState(_view(call), call.result, call.refusal, call.id == first)


def _view(call: EnvCall) -> CallView:
    return CallView(
        id=call.id,
        env=call.env_id,
        kind=call.kind,
        status=call.status,
        attempts=call.attempts,
        url=f"/api/v1/envs/{call.env_id}/calls/{call.id}",
    )


async def _answer(svc, call_id: int, wait_s: float) -> JSONResponse:
    """Wait for the call (polling the database) up to `wait_s`, then answer as its endpoint does."""
    deadline = time.monotonic() + wait_s
    while True:
        state = await run_in_threadpool(_read, svc.session_factory, call_id)
        if state.call.status in FINISHED or time.monotonic() >= deadline:
            break
        await asyncio.sleep(svc.settings.poll_s)
    call = state.call
    if call.status == "done":
        assert state.result is not None, "a done call has its answer"
        if state.makes_env:
            return JSONResponse({"id": call.env, "card": state.result}, status_code=201)
        if call.kind == "finalize":
            return JSONResponse(final_as_served(state.result))
        return JSONResponse(state.result)
    if call.status == "refused":
        assert state.refusal is not None, "a refused call has its reason"
        return _refusal_response(state.refusal)
    if call.status == "failed":  # the reason (paths, hosts, SQL) is the operator's: env_calls.error and the log
        detail = (
            f"call: env call {call.id} could not run on the server's workers after {call.attempts} tries; "
            f"the operator's records name the reason under call {call.id}"
        )
        return JSONResponse({"detail": detail, "field": "call"}, status_code=502)
    return JSONResponse(call.model_dump(mode="json"), status_code=202, headers={"Location": call.url})


def _refusal_response(refusal: dict[str, Any]) -> JSONResponse:
    """The library's refusal with what a client needs to raise the same exception: 409 for a spent budget, 422
    naming the field for a candidate that is not one or a test's workload that is not public. Any other
    OptimizeError says the env's stored state and the library disagree, which no candidate causes: a 500 under its
    own name, so no client takes it for the candidate's fault."""
    if refusal["error"] == "BudgetExhausted":
        return JSONResponse({**refusal, "field": "budget"}, status_code=409)
    if refusal["error"] == "InvalidCandidate":
        return JSONResponse({**refusal, "field": refusal["arguments"]["where"]}, status_code=422)
    if refusal["error"] == "UnknownWorkload":
        return JSONResponse({**refusal, "field": "workload"}, status_code=422)
    return JSONResponse({**refusal, "field": "env"}, status_code=500)
