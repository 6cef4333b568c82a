"""Signing in to the pages with an API token: the cookie it sets, where it goes next, what it refuses.

Through the real app in process (FastAPI's TestClient, one cookie jar per test as one browser) over the sample
leaderboard. An attacker's moves are tried: a redirect off the site through `next`, a form posted from another
site (login CSRF, forced sign-out), a bad, revoked or banned token; the token never shows in a page, a redirect or
the log.
"""

from __future__ import annotations

import pytest

SITE = "http://testserver"


def browser(app, site: str = SITE):
    """A fresh client that keeps cookies and does not follow redirects, as one browser tab."""
    from fastapi.testclient import TestClient

    return TestClient(app.client.app, base_url=site, follow_redirects=False)


def sign_in(client, token: str, next_path: str | None = None, origin: str | None = SITE, **headers):
    data = {"token": token} | ({"next": next_path} if next_path is not None else {})
    return client.post("/sign-in", data=data, headers=({"Origin": origin} if origin else {}) | headers)


def test_a_valid_token_sets_the_cookie_that_shows_the_reader_their_private_submission(in_process_service, caplog):
    from solbench.service.web.router import TOKEN_COOKIE

    app, sample = in_process_service, in_process_service.sample
    token, private = sample.tokens["alice"], f"/submissions/{sample.private_submission}"
    client = browser(app)
    assert client.get(private).status_code == 404
    page = client.get(private.replace(str(sample.private_submission), str(sample.open_set_submission)))
    assert f'href="/sign-in?next=/submissions/{sample.open_set_submission}"' in page.text

    caplog.set_level("DEBUG")
    answer = sign_in(client, token, private)
    assert answer.status_code == 303 and answer.headers["location"] == private
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{TOKEN_COOKIE}={token};")
    assert {"HttpOnly", "Path=/", "SameSite=lax", "Max-Age=2592000"} <= {part.strip() for part in cookie.split(";")}
    assert "Secure" not in cookie  # over http a Secure cookie would never come back
    assert token not in caplog.text

    page = client.get(private)
    assert page.status_code == 200 and "(private: only you see it)" in page.text
    assert 'action="/sign-out"' in page.text and ">alice</a>" in page.text and ">sign in<" not in page.text


def test_over_https_the_cookie_is_secure_and_without_next_the_user_page_follows(in_process_service):
    https = "https://testserver"
    answer = sign_in(browser(in_process_service, https), in_process_service.sample.tokens["bob"], origin=https)
    assert answer.status_code == 303 and answer.headers["location"] == "/users/bob"
    assert "Secure" in answer.headers["set-cookie"]


@pytest.fixture(scope="module")
def refused_tokens(in_process_service):
    """A token of nobody's, a revoked one, a banned user's one: each signs nobody in."""
    from solbench.service.auth import add_user, revoke_tokens, set_banned

    factory = in_process_service.service.session_factory
    revoked, banned = add_user(factory, "quitter").token, add_user(factory, "cheater").token
    revoke_tokens(factory, "quitter")
    set_banned(factory, "cheater")
    return {"unknown": "sb_" + "x" * 43, "revoked": revoked, "banned": banned}


@pytest.mark.parametrize("kind", ["unknown", "revoked", "banned", "empty"])
def test_a_bad_token_shows_the_form_again_with_why_and_sets_no_cookie(in_process_service, refused_tokens, kind):
    token = refused_tokens.get(kind, "")
    answer = sign_in(browser(in_process_service), token, "/status")
    assert answer.status_code == (400 if kind == "empty" else 401)
    assert "set-cookie" not in answer.headers and 'id="sign-in"' in answer.text
    message = "Paste your API token" if kind == "empty" else "That token signs nobody in"
    assert message in answer.text and 'name="next" value="/status"' in answer.text
    assert not token or token not in answer.text


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "/\t/evil.example",
        "javascript:alert(1)",
        "http:/evil.example",
        "evil.example",
    ],
)
def test_next_never_leaves_the_site(in_process_service, target):
    app = in_process_service
    answer = sign_in(browser(app), app.sample.tokens["carol"], target)
    assert answer.status_code == 303 and answer.headers["location"] == "/users/carol"
    assert "evil" not in browser(app).get("/sign-in", params={"next": target}).text


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Referer": "https://evil.example/login-csrf.html"},
        {"Origin": "https://testserver"},
    ],
)  # http is this site, https is not
def test_forms_posted_from_another_site_are_refused(in_process_service, headers):
    from solbench.service.web.router import TOKEN_COOKIE

    app = in_process_service
    client = browser(app)
    answer = sign_in(client, app.sample.tokens["dave"], origin=None, **headers)
    assert answer.status_code == 403 and "set-cookie" not in answer.headers
    assert "posted from another site" in answer.text

    assert sign_in(client, app.sample.tokens["dave"]).status_code == 303  # now from this site
    forced = client.post("/sign-out", headers=headers)
    assert forced.status_code == 403 and "set-cookie" not in forced.headers
    assert client.cookies.get(TOKEN_COOKIE) == app.sample.tokens["dave"]


def test_a_form_naming_no_site_or_this_one_by_referer_is_taken(in_process_service):
    app = in_process_service
    assert sign_in(browser(app), app.sample.tokens["eve"], origin=None).status_code == 303  # curl
    assert (
        sign_in(browser(app), app.sample.tokens["eve"], origin=None, Referer=f"{SITE}/sign-in?next=/").status_code
        == 303
    )


def test_signing_out_clears_the_cookie(in_process_service):
    from solbench.service.web.router import TOKEN_COOKIE

    app, sample = in_process_service, in_process_service.sample
    client = browser(app)
    sign_in(client, sample.tokens["alice"])
    answer = client.post("/sign-out", headers={"Origin": SITE})
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    cleared = answer.headers["set-cookie"]
    assert cleared.startswith(f'{TOKEN_COOKIE}="";') and "Max-Age=0" in cleared
    assert TOKEN_COOKIE not in client.cookies
    assert client.get(f"/submissions/{sample.private_submission}").status_code == 404
    assert ">sign in<" in client.get("/").text
