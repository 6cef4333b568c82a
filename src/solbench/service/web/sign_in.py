"""The checks of signing in to the pages with an API token, kept apart from the routes so each can be read whole.

Signing in stores the token in the `solbench_token` cookie (HttpOnly, SameSite=Lax), which the pages read to know
who is reading; the API never reads it (only `Authorization: Bearer`), so a cookie a browser sends along cannot
submit or delete anything. What an attacker could still try: send a victim's browser, signed in, to another site
after signing in (an open redirect through `next`), or sign the victim in as the attacker from another site's form
(login CSRF: the pages would then show the victim the attacker's account as their own), or sign them out.
`local_path` and `same_origin` stop those.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import Request

COOKIE_MAX_AGE_S = 30 * 24 * 3600
"""How long a browser keeps the token: a month, then the reader signs in again."""
MAX_PATH_CHARS = 2000


def local_path(target: str | None) -> str | None:
    """`target` when it is a path on this site, else None. It must start with one "/": "//host" and "/\\host" are
    read by browsers as another host, and so are they with a tab or newline in between (browsers drop those from a
    URL), so only printable ASCII without a backslash is taken."""
    if not target or len(target) > MAX_PATH_CHARS or not target.startswith("/") or target[1:2] in ("/", "\\"):
        return None
    if "\\" in target or not all(0x21 <= ord(c) < 0x7F for c in target):
        return None
    return target


def same_origin(request: Request) -> bool:
    """Whether the form was posted from this site: the Origin header, else the Referer, names this request's own
    scheme and host. A request that names neither (curl, a script) is taken: browsers send Origin with every
    cross-site POST, so a page elsewhere cannot post without naming itself ("null" from a sandboxed frame or a
    no-referrer page names no site and is refused)."""
    source = request.headers.get("origin") or request.headers.get("referer")
    if source is None:
        return True
    parts = urlsplit(source)
    return (parts.scheme.lower(), parts.netloc.lower()) == (request.url.scheme, request.url.netloc.lower())
