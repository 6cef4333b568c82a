"""The /api/v1 routers: submissions, problems, leaderboards, users, status."""

from fastapi import APIRouter

from solbench.service.api import leaderboards, problems, status, submissions, users

router = APIRouter()
for module in (submissions, problems, leaderboards, users, status):
    router.include_router(module.router)

__all__ = ["router"]
