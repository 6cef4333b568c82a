"""What a reader who may not see a submission's code sees of the text its code produced.

Until a set is frozen, the code of a ranked submission is its author's (queries.code_visible). Code
also leaks through what it prints and raises: a traceback quotes its source lines, a guard finding
names its file and line, the log shows what it printed and where the server is installed, and the
code hash confirms a guess. For such a reader every one of those is replaced by one fixed reason;
statuses, scores, timings and correctness figures stay, since they are the leaderboard itself. The
API's submission view and the submission page both go through here, so they cannot disagree.
"""

from __future__ import annotations

import copy
from typing import Any

HIDDEN = "hidden until the problem set is frozen: only the author and admins see it"


def visible_traces(traces: list[dict[str, Any]], code_visible: bool) -> list[dict[str, Any]]:
    """Stored traces as a reader sees them: whole where the code is visible to them (queries.code_visible), else
    copies without solution-derived text: the log, the failure line (its rule is kept), and the details of static
    findings and guard checks (their rule and outcome are kept)."""
    if code_visible:
        return traces
    redacted = []
    for trace in traces:
        trace = copy.deepcopy(trace)
        evaluation = trace.get("evaluation") or {}
        if evaluation.get("log"):
            evaluation["log"] = HIDDEN
        details = evaluation.get("solbench") or {}
        if details.get("failure"):
            rule = details.get("failed_rule") or evaluation.get("status", "failure")
            details["failure"] = f"{rule}: {HIDDEN}"
        for check in details.get("checks") or []:
            if check.get("phase") != "correctness" and check.get("detail"):
                check["detail"] = HIDDEN
        if details.get("cache"):  # its key is a sha256 of the code: like the code hash, it confirms a guess
            details["cache"] = None
        redacted.append(trace)
    return redacted


def visible_error(error: str | None, code_visible: bool) -> str | None:
    """A submission's error line as a reader sees it (an infrastructure error can quote the harness's paths, or
    the solution)."""
    return error if code_visible or not error else HIDDEN
