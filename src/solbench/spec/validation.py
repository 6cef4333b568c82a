"""Turns pydantic validation errors into SpecErrors that name the file, line and field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from solbench.spec.errors import SpecError

Model = TypeVar("Model", bound=BaseModel)


def field_path(location: tuple[Any, ...]) -> str:
    """('inputs', 'A', 'dtype') -> 'inputs.A.dtype'; list positions become [i]."""
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def validate_model(model: type[Model], data: Any, path: Path | str, *, line: int | None = None) -> Model:
    """Validate `data` as `model`; the first error becomes a SpecError naming its field."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        location = tuple(p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        # Discriminated unions put the tag in the location; it adds nothing for the reader.
        location = tuple(
            p for p in location if p not in ("random", "scalar", "safetensors", "custom", "const", "var", "expr")
        )
        message = first["msg"].removeprefix("Value error, ")
        field = field_path(location)
        # Cross-field validators name their field at the start of the message: move it into the location.
        named = re.match(r"^([A-Za-z_][\w.\[\]]*): (.+)$", message, re.DOTALL)
        if named:
            field = f"{field}.{named.group(1)}" if field else named.group(1)
            message = named.group(2)
        raise SpecError(path, field or None, message, line=line) from None


def read_json(path: Path) -> Any:
    """Read a JSON file, naming it and the position of a syntax error."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(path, None, "file not found") from None
    except OSError as error:
        raise SpecError(path, None, f"cannot read: {error.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SpecError(path, None, f"invalid JSON: {error.msg} (column {error.colno})", line=error.lineno) from None


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """Read a JSON-lines file as (line number, value) pairs, skipping blank lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(path, None, "file not found") from None
    rows = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            rows.append((number, json.loads(raw)))
        except json.JSONDecodeError as error:
            raise SpecError(path, None, f"invalid JSON: {error.msg} (column {error.colno})", line=number) from None
    return rows
