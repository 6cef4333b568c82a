"""A client of the service's HTTP API (httpx): what `solbench submit` and `solbench status` use."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from solbench.service.errors import BodyTooLarge, ServerRefused, ServiceError

TOKEN_VARIABLE = "SOLBENCH_TOKEN"
SERVER_VARIABLE = "SOLBENCH_SERVER"
DEFAULT_SERVER = "http://127.0.0.1:8000"
FINISHED = ("done", "failed", "cancelled")


class ServiceClient:
    def __init__(self, server: str, token: str | None = None, *, timeout_s: float = 30.0, connect_wait_s: float = 0.0):
        import httpx

        self.server = server.rstrip("/")
        self.connect_wait_s = connect_wait_s
        """How long to keep trying a server that does not answer yet (one that is still starting)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.server + "/api/v1", headers=headers, timeout=timeout_s)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def submit(
        self, problem: str, solution: dict[str, Any], *, mode: str = "private", idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Queue `solution`; a fresh idempotency key is sent (so a retried request cannot submit twice). A body over
        the server's published size limit raises BodyTooLarge, and nothing is sent."""
        key = idempotency_key or uuid.uuid4().hex
        body = json.dumps(
            {"problem": problem, "solution": solution, "mode": mode}, ensure_ascii=False, separators=(",", ":")
        ).encode()
        limit = self.max_body_bytes()
        if limit is not None and len(body) > limit:
            raise BodyTooLarge(len(body), limit, self.server)
        return self._request(
            "POST", "/submissions", content=body, headers={"Idempotency-Key": key, "Content-Type": "application/json"}
        )

    def max_body_bytes(self) -> int | None:
        """The largest request body the server accepts (GET /limits); None from a server too old to say."""
        try:
            return self._request("GET", "/limits")["max_body_bytes"]
        except ServerRefused as error:
            if error.status == 404:
                return None
            raise

    def submission(self, submission_id: int) -> dict[str, Any]:
        return self._request("GET", f"/submissions/{submission_id}")

    def delete(self, submission_id: int) -> dict[str, Any]:
        return self._request("DELETE", f"/submissions/{submission_id}")

    def bundle(self, submission_id: int) -> dict[str, Any]:
        return self._request("GET", f"/submissions/{submission_id}/bundle")

    def wait(
        self, submission_id: int, *, timeout_s: float = 3600.0, poll_s: float = 1.0, progress=None
    ) -> dict[str, Any]:
        """Poll until the submission finished (done, failed or cancelled); ServiceError after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            view = self.submission(submission_id)
            if view["status"] in FINISHED:
                return view
            if progress is not None:
                progress(view)
            if time.monotonic() > deadline:
                raise ServiceError(f"submission {submission_id}: still {view['status']} after {timeout_s:.0f} s")
            time.sleep(poll_s)

    def get(self, path: str) -> Any:
        return self._request("GET", path)

    def _request(self, method: str, path: str, **options) -> Any:
        import httpx

        deadline = time.monotonic() + self.connect_wait_s
        while True:
            try:
                response = self._http.request(method, path, **options)
                break
            except httpx.ConnectError as error:
                if time.monotonic() < deadline:
                    time.sleep(0.5)
                    continue
                raise ServiceError(f"--server {self.server}: {error} (is `solbench serve` running there?)") from None
            except httpx.HTTPError as error:
                sending = f" (while sending a {len(options['content'])}-byte request)" if "content" in options else ""
                raise ServiceError(f"--server {self.server}: {error}{sending}") from None
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except ValueError:
                detail = response.text
            retry = response.headers.get("Retry-After")
            raise ServerRefused(response.status_code, str(detail), float(retry) if retry else None)
        return response.json()
