"""GET /leaderboards: set totals and per-problem boards, straight from queries.py."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException
from sqlalchemy.orm import Session

from solbench.service import queries
from solbench.service.api.deps import session

router = APIRouter(tags=["leaderboards"])


@router.get("/leaderboards", response_model=list[str])
def list_sets(db: Session = Depends(session)):
    """The sets that have leaderboards."""
    return queries.set_names(db)


@router.get("/leaderboards/{set_name}", response_model=queries.SetBoard, responses={404: {}})
def set_board(set_name: str, db: Session = Depends(session)):
    """Per-user totals: the mean over the set's problems of the user's best S, a missing problem counting 0
    (`missing: "zero"` in the answer; the scoring layer's set_total)."""
    board = queries.set_leaderboard(db, set_name)
    if board is None:
        raise HTTPException(404, f"set {set_name!r}: no such set (GET /api/v1/leaderboards lists them)")
    return board


@router.get("/leaderboards/{set_name}/{problem}", response_model=queries.ProblemBoard, responses={404: {}})
def problem_board(set_name: str, problem: str, db: Session = Depends(session)):
    """Best score per user, ties broken by the earlier submission, and the history of first places."""
    board = queries.problem_leaderboard(db, problem)
    if board is None or board.set != set_name:
        raise HTTPException(404, f"problem {problem!r}: not in set {set_name!r}")
    return board
