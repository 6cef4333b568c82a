"""Reading trace files (JSONL, one Trace per line) with file:line: field errors."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from solbench.spec.errors import SpecError
from solbench.spec.trace import Trace


def read_traces(path: Path | str) -> list[Trace]:
    """Every trace in a JSONL file, in file order; blank lines are skipped.

    Raises SpecError naming the file, the 1-based line and the first field at fault
    (``traces.jsonl:3: evaluation.status: Input should be 'PASSED', …``), or that the file is missing.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(path, None, "file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(path, None, f"cannot read traces: {error}") from None
    traces = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            traces.append(Trace.model_validate_json(line))
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            field = ".".join(str(part) for part in first["loc"])
            raise SpecError(path, field or None, first["msg"], line=number) from None
    return traces
