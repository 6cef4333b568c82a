"""The env client's own rules, without a server: which URL of a 202 it follows with the user's token."""

from __future__ import annotations

import httpx
import pytest

from solbench.service.env_client import _call_path
from solbench.service.errors import ServiceError


def pending(url: object) -> httpx.Response:
    request = httpx.Request("POST", "http://server/api/v1/envs/1/step")
    body = {"id": 2, "env": 1, "kind": "step", "status": "queued", "url": url}
    return httpx.Response(202, json=body, request=request)


def test_a_202_is_followed_only_to_a_call_of_the_same_server():
    assert _call_path(pending("/api/v1/envs/1/calls/2")) == "/envs/1/calls/2"
    for url in (
        "http://elsewhere.example/api/v1/envs/1/calls/2",
        "//elsewhere.example/api/v1/envs/1/calls/2",
        "/api/v1//elsewhere.example/envs/1/calls/2",
        "/api/v1/envs/1/calls/2/../../../../admin",
        "/api/v1/users/me",
        None,
    ):
        with pytest.raises(ServiceError, match="not a call of /api/v1/envs"):
            _call_path(pending(url))
