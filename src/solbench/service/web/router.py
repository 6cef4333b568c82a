"""The page routes, an APIRouter the app factory mounts at /: HTML pages, the stylesheet, a 404 page, and signing
in and out (the token cookie; the checks are in `sign_in.py`).

Each handler opens one read session, asks `pages.py` for the page's values and renders its template;
nothing here touches the database directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from solbench.service.web import pages
from solbench.service.web.rendering import STATIC, render
from solbench.service.web.sign_in import COOKIE_MAX_AGE_S, local_path, same_origin

router = APIRouter(include_in_schema=False)
TOKEN_COOKIE = "solbench_token"
STYLESHEET = "style.css"
SIGN_IN_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
}
"""The sign-in page is never cached (a shared cache would show one reader's name to the next) nor framed."""


def _session(request: Request) -> Iterator[Session]:
    with request.app.state.service.session_factory() as session:
        yield session


def _hardware(request: Request) -> str:
    return request.app.state.service.settings.hardware


def _reach_dir(request: Request):
    return request.app.state.service.settings.reach_dir


def _viewer(request: Request, session: Session = Depends(_session)) -> pages.Viewer:
    """The reader of a request, by the token it carries: Authorization: Bearer, else the solbench_token cookie."""
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else request.cookies.get(TOKEN_COOKIE, "")
    return _viewer_of(session, token)


def _viewer_of(session: Session, token: str) -> pages.Viewer:
    """The reader a token makes: its user, or anonymous for no token or an unknown, revoked or banned one."""
    from solbench.service.auth import authenticate

    user = authenticate(session, token) if token else None
    if user is None or user.banned:
        return pages.Viewer()
    return pages.Viewer(name=user.name, is_admin=user.is_admin)


def _html(template: str, build: Callable[[], dict], request: Request, viewer: pages.Viewer) -> HTMLResponse:
    """The page, or a 404 page that says what is missing (an unknown name, or something the viewer may not see);
    the navigation names the viewer, or offers to sign in and come back here."""
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    try:
        context = build()
    except pages.PageNotFound as missing:
        return HTMLResponse(
            render("not_found.html", title="Not found", nav="", message=str(missing), viewer=viewer, here=here),
            status_code=404,
        )
    return HTMLResponse(render(template, viewer=viewer, here=here, **context))


@router.get("/", response_class=HTMLResponse)
def home_page(
    request: Request, session: Session = Depends(_session), viewer: pages.Viewer = Depends(_viewer)
) -> HTMLResponse:
    return _html("home.html", lambda: pages.home(session, _hardware(request)), request, viewer)


@router.get("/sets/{name}", response_class=HTMLResponse)
def set_page(
    request: Request,
    name: str,
    page: int = Query(1),
    session: Session = Depends(_session),
    viewer: pages.Viewer = Depends(_viewer),
) -> HTMLResponse:
    return _html(
        "set.html",
        lambda: pages.problem_set(session, name, page, _hardware(request), _reach_dir(request)),
        request,
        viewer,
    )


@router.get("/sets/{set_name}/problems/{name}", response_class=HTMLResponse)
def problem_page(
    request: Request,
    set_name: str,
    name: str,
    page: int = Query(1),
    session: Session = Depends(_session),
    viewer: pages.Viewer = Depends(_viewer),
) -> HTMLResponse:
    return _html(
        "problem.html",
        lambda: pages.problem(session, set_name, name, page, _hardware(request), _reach_dir(request)),
        request,
        viewer,
    )


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(
    request: Request, submission_id: int, session: Session = Depends(_session), viewer: pages.Viewer = Depends(_viewer)
) -> HTMLResponse:
    return _html("submission.html", lambda: pages.submission(session, submission_id, viewer), request, viewer)


@router.get("/users/{name}", response_class=HTMLResponse)
def user_page(
    request: Request,
    name: str,
    page: int = Query(1),
    session: Session = Depends(_session),
    viewer: pages.Viewer = Depends(_viewer),
) -> HTMLResponse:
    return _html("user.html", lambda: pages.user(session, name, page, viewer), request, viewer)


@router.get("/status", response_class=HTMLResponse)
def status_page(
    request: Request, session: Session = Depends(_session), viewer: pages.Viewer = Depends(_viewer)
) -> HTMLResponse:
    return _html("status.html", lambda: pages.status(session, _hardware(request), viewer), request, viewer)


async def _form(request: Request) -> dict[str, str]:
    """The fields of a posted form (the first value of each), read here so the pages need no multipart package."""
    body = (await request.body()).decode("utf-8", "replace")
    try:
        return {name: values[0] for name, values in parse_qs(body, max_num_fields=20).items()}
    except ValueError:  # more fields than any form of ours has
        return {}


def _sign_in_form(
    viewer: pages.Viewer, next_path: str | None, message: str = "", status_code: int = 200
) -> HTMLResponse:
    """The sign-in page; never with the token that was sent (it would sit in the page, and in caches of it)."""
    return HTMLResponse(
        render(
            "sign_in.html",
            title="Sign in",
            nav="sign-in",
            viewer=viewer,
            here="/",
            next=next_path or "",
            message=message,
        ),
        status_code=status_code,
        headers=SIGN_IN_HEADERS,
    )


@router.get("/sign-in", response_class=HTMLResponse)
def sign_in_page(next: str = Query(""), viewer: pages.Viewer = Depends(_viewer)) -> HTMLResponse:
    return _sign_in_form(viewer, local_path(next))


@router.post("/sign-in", response_class=HTMLResponse)
def sign_in(
    request: Request,
    form: dict[str, str] = Depends(_form),
    session: Session = Depends(_session),
    viewer: pages.Viewer = Depends(_viewer),
) -> Response:
    """A live token of a user who is not banned sets the cookie and goes on (303) to `next` when that is a path on
    this site, else to the user's page; anything else shows the form again with why, and sets nothing."""
    next_path = local_path(form.get("next") or request.query_params.get("next"))
    if not same_origin(request):
        return _sign_in_form(
            viewer, next_path, "Refused: this form was posted from another site. Sign in from this page.", 403
        )
    token = form.get("token", "").strip()
    if not token:
        return _sign_in_form(viewer, next_path, "Paste your API token (solbench admin add-user prints one).", 400)
    reader = _viewer_of(session, token)
    if reader.name is None:
        return _sign_in_form(
            viewer, next_path, "That token signs nobody in: it is unknown or revoked, or its user is banned.", 401
        )
    response = RedirectResponse(next_path or f"/users/{quote(reader.name)}", status_code=303)
    response.set_cookie(
        TOKEN_COOKIE,
        token,
        max_age=COOKIE_MAX_AGE_S,
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/sign-out", response_class=HTMLResponse)
def sign_out(request: Request, viewer: pages.Viewer = Depends(_viewer)) -> Response:
    """Forget the cookie (the token itself stays valid: `solbench admin revoke-token` ends it)."""
    if not same_origin(request):
        return _sign_in_form(
            viewer, None, "Refused: signing out was posted from another site. Sign out from this page.", 403
        )
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(TOKEN_COOKIE, path="/", httponly=True, samesite="lax", secure=request.url.scheme == "https")
    return response


@router.get("/static/style.css")
def stylesheet() -> Response:
    return Response(
        (STATIC / STYLESHEET).read_text(), media_type="text/css", headers={"Cache-Control": "public, max-age=3600"}
    )
