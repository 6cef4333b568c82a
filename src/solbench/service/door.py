"""Validation at the door: a submission is checked before anything is stored, and refused with the field at
fault named (unknown problem, malformed solution, a solution the static check blocks)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import ValidationError

from solbench.service.errors import ServiceError
from solbench.spec import Solution


class Refused(ServiceError):
    """A submission refused at the door: `field` is the dotted location in the request body (HTTP 422)."""

    def __init__(self, field: str, message: str, status: int = 422):
        self.field = field
        self.status = status
        super().__init__(f"{field}: {message}")


def parse_solution(data: Any, problem: str) -> Solution:
    """The solution JSON as solbench's Solution, for `problem`; Refused naming the first bad field."""
    from solbench.spec.validation import field_path

    if not isinstance(data, dict):
        raise Refused("solution", "must be a JSON object (a solution file's content)")
    try:
        solution = Solution.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        location = field_path(tuple(p for p in first["loc"] if not str(p).startswith("function-")))
        message = first["msg"].removeprefix("Value error, ")
        named = re.match(r"^([A-Za-z_][\w.\[\]]*): (.+)$", message, re.DOTALL)
        if named:  # a cross-field validator names its field at the start of its message
            location = f"{location}.{named.group(1)}" if location else named.group(1)
            message = named.group(2)
        raise Refused(f"solution.{location}" if location else "solution", message) from None
    if solution.definition != problem:
        raise Refused("solution.definition", f"{solution.definition!r} is not the problem submitted to ({problem!r})")
    return solution


def check_static(solution: Solution) -> None:
    """Refuse a solution whose sources the static rules block (it would only ever score REWARD_HACK)."""
    from solbench.guard import blocking, check_solution

    blocked = blocking(check_solution(solution))
    if blocked:
        index = next((i for i, s in enumerate(solution.sources) if s.path == blocked[0].file), 0)
        raise Refused(
            f"solution.sources[{index}].content",
            "blocked by the static check: " + "; ".join(f.one_line() for f in blocked[:3]),
        )


def code_hash(solution: Solution) -> str:
    """sha256 of what decides the solution's behaviour (spec and sources; not its name or author)."""
    from solbench.evaluation.result_cache import solution_material

    text = json.dumps(solution_material(solution), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
