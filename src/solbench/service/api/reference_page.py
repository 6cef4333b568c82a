"""GET /api/v1/docs: the API reference rendered on the server from the OpenAPI document.

FastAPI's default docs page loads Swagger UI's scripts from a CDN, so it is blank on a machine without internet
access (GPU clusters often have none). This page needs nothing but the app: every endpoint with its parameters,
body and answers, and every schema with its fields, as plain HTML.
"""

from __future__ import annotations

from html import escape

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)

STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#222}
code{background:#f3f3f3;padding:0 .25em}h2{border-bottom:1px solid #ccc;margin-top:2em}
.op{border:1px solid #ddd;border-radius:4px;margin:1em 0;padding:.5em 1em}.method{font-weight:bold;margin-right:.5em}
table{border-collapse:collapse}td,th{border-bottom:1px solid #eee;padding:.2em .6em;text-align:left;vertical-align:top}
.muted{color:#666}"""
METHODS = ("get", "post", "put", "patch", "delete")


@router.get("/docs", response_class=HTMLResponse)
def api_reference(request: Request) -> HTMLResponse:
    return HTMLResponse(reference_html(request.app.openapi()))


def reference_html(document: dict) -> str:
    info = document.get("info", {})
    title = escape(f"{info.get('title', 'API')} {info.get('version', '')}".strip())
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{STYLE}</style>"
        f"</head><body><h1>{title}</h1><p class='muted'>The machine-readable document: "
        f"<a href='openapi.json'>openapi.json</a>. Authenticate with <code>Authorization: Bearer TOKEN</code>."
        "</p><h2>Endpoints</h2>"
    ]
    for path, operations in document.get("paths", {}).items():
        for method in METHODS:
            if method in operations:
                parts.append(_operation(method, path, operations[method]))
    parts.append("<h2>Schemas</h2>")
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        parts.append(_schema(name, schema))
    parts.append("</body></html>")
    return "".join(parts)


def _operation(method: str, path: str, operation: dict) -> str:
    anchor = escape(f"{method}-{path}", quote=True)
    html = [f"<div class='op' id='{anchor}'><span class='method'>{method.upper()}</span><code>{escape(path)}</code>"]
    if operation.get("summary"):
        html.append(f" — {escape(operation['summary'])}")
    if operation.get("description"):
        html.append(f"<p>{escape(operation['description'])}</p>")
    parameters = operation.get("parameters", [])
    if parameters:
        rows = "".join(
            f"<tr><td><code>{escape(p['name'])}</code></td><td>{escape(p.get('in', ''))}</td>"
            f"<td>{_type(p.get('schema', {}))}</td><td>{'required' if p.get('required') else ''}</td>"
            f"<td>{escape(p.get('description', ''))}</td></tr>"
            for p in parameters
        )
        html.append(f"<table><tr><th>parameter</th><th>in</th><th>type</th><th></th><th></th></tr>{rows}</table>")
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        html.append(f"<p>Body ({escape(media)}): {_type(content.get('schema', {}))}</p>")
    answers = ", ".join(
        f"{escape(code)} {escape(r.get('description', ''))}" for code, r in operation.get("responses", {}).items()
    )
    html.append(f"<p class='muted'>Answers: {answers}</p></div>")
    return "".join(html)


def _schema(name: str, schema: dict) -> str:
    required = set(schema.get("required", ()))
    rows = "".join(
        f"<tr><td><code>{escape(field)}</code></td><td>{_type(spec)}</td>"
        f"<td>{'required' if field in required else ''}</td>"
        f"<td>{escape(spec.get('description', ''))}</td></tr>"
        for field, spec in schema.get("properties", {}).items()
    )
    description = f"<p>{escape(schema['description'])}</p>" if schema.get("description") else ""
    values = f"<p>One of: {escape(', '.join(map(str, schema['enum'])))}</p>" if schema.get("enum") else ""
    table = f"<table>{rows}</table>" if rows else ""
    return f"<h3 id='{escape(name, quote=True)}'>{escape(name)}</h3>{description}{values}{table}"


def _type(schema: dict) -> str:
    """A schema's type in a few words, linking to named schemas."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"<a href='#{escape(name, quote=True)}'>{escape(name)}</a>"
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in schema:
            return " | ".join(_type(option) for option in schema[combinator])
    if schema.get("type") == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if schema.get("type") == "object" and "additionalProperties" in schema:
        extra = schema["additionalProperties"]
        return f"map to {_type(extra) if isinstance(extra, dict) else 'anything'}"
    return escape(str(schema.get("type", "any")))
