"""The /api/v1 routers: submissions, agent envs, problems, leaderboards, users, status, admin, the reference page."""

from fastapi import APIRouter

from solbench.service.api import admin, envs, leaderboards, problems, reference_page, status, submissions, users

router = APIRouter()
for module in (submissions, envs, problems, leaderboards, users, status, admin, reference_page):
    router.include_router(module.router)

__all__ = ["router"]
