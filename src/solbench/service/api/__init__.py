"""The /api/v1 routers: submissions, problems, leaderboards, users, status, admin, and the reference page (docs)."""

from fastapi import APIRouter

from solbench.service.api import admin, leaderboards, problems, reference_page, status, submissions, users

router = APIRouter()
for module in (submissions, problems, leaderboards, users, status, admin, reference_page):
    router.include_router(module.router)

__all__ = ["router"]
