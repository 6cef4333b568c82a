"""The API reference at /api/v1/docs works offline: rendered from the OpenAPI document, loading nothing else."""

from __future__ import annotations

import re

METHODS = ("get", "post", "put", "patch", "delete")


def test_the_reference_lists_every_endpoint_and_schema_and_loads_nothing_from_elsewhere(in_process_service):
    document = in_process_service.get("/api/v1/openapi.json").json()
    page = in_process_service.get("/api/v1/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    for path, operations in document["paths"].items():
        for method in set(operations) & set(METHODS):
            assert f"id='{method}-{path}'" in html, f"{method.upper()} {path} missing from the reference"
    for name in document["components"]["schemas"]:
        assert f"<h3 id='{name}'>" in html
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:)?//""", html), "the page loads something from elsewhere"
    assert "<script" not in html


def test_text_from_the_document_is_escaped():
    from solbench.service.api.reference_page import reference_html

    html = reference_html(
        {
            "info": {"title": "<script>x</script>"},
            "paths": {"/a/{b}": {"get": {"summary": "<img src=x onerror=alert(1)>", "responses": {}}}},
        }
    )
    assert "<script>x" not in html and "<img" not in html
