"""The page routes, an APIRouter the app factory mounts at /: HTML pages, the stylesheet, and a 404 page.

Each handler opens one read session, asks `pages.py` for the page's values and renders its template;
nothing here touches the database directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from solbench.service.web import pages
from solbench.service.web.rendering import STATIC, render

router = APIRouter(include_in_schema=False)
TOKEN_COOKIE = "solbench_token"
STYLESHEET = "style.css"


def _session(request: Request) -> Iterator[Session]:
    with request.app.state.service.session_factory() as session:
        yield session


def _hardware(request: Request) -> str:
    return request.app.state.service.settings.hardware


def _reach_dir(request: Request):
    return request.app.state.service.settings.reach_dir


def _viewer(request: Request, session: Session = Depends(_session)) -> pages.Viewer:
    """The user whose API token the request carries (Authorization: Bearer, or the solbench_token cookie);
    anonymous without one, or with an unknown, revoked or banned one."""
    from solbench.service.auth import authenticate

    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else request.cookies.get(TOKEN_COOKIE, "")
    user = authenticate(session, token) if token else None
    if user is None or user.banned:
        return pages.Viewer()
    return pages.Viewer(name=user.name, is_admin=user.is_admin)


def _html(template: str, build: Callable[[], dict]) -> HTMLResponse:
    """The page, or a 404 page that says what is missing (an unknown name, or something the viewer may not see)."""
    try:
        context = build()
    except pages.PageNotFound as missing:
        return HTMLResponse(render("not_found.html", title="Not found", nav="", message=str(missing)),
                            status_code=404)
    return HTMLResponse(render(template, **context))


@router.get("/", response_class=HTMLResponse)
def home_page(request: Request, session: Session = Depends(_session)) -> HTMLResponse:
    return _html("home.html", lambda: pages.home(session, _hardware(request)))


@router.get("/sets/{name}", response_class=HTMLResponse)
def set_page(request: Request, name: str, page: int = Query(1), session: Session = Depends(_session)) -> HTMLResponse:
    return _html("set.html", lambda: pages.problem_set(session, name, page, _hardware(request), _reach_dir(request)))


@router.get("/sets/{set_name}/problems/{name}", response_class=HTMLResponse)
def problem_page(request: Request, set_name: str, name: str, page: int = Query(1),
                 session: Session = Depends(_session)) -> HTMLResponse:
    return _html("problem.html", lambda: pages.problem(session, set_name, name, page, _hardware(request),
                                                       _reach_dir(request)))


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(submission_id: int, session: Session = Depends(_session),
                    viewer: pages.Viewer = Depends(_viewer)) -> HTMLResponse:
    return _html("submission.html", lambda: pages.submission(session, submission_id, viewer))


@router.get("/users/{name}", response_class=HTMLResponse)
def user_page(name: str, page: int = Query(1), session: Session = Depends(_session),
              viewer: pages.Viewer = Depends(_viewer)) -> HTMLResponse:
    return _html("user.html", lambda: pages.user(session, name, page, viewer))


@router.get("/status", response_class=HTMLResponse)
def status_page(request: Request, session: Session = Depends(_session)) -> HTMLResponse:
    return _html("status.html", lambda: pages.status(session, _hardware(request)))


@router.get("/static/style.css")
def stylesheet() -> Response:
    return Response((STATIC / STYLESHEET).read_text(), media_type="text/css",
                    headers={"Cache-Control": "public, max-age=3600"})
