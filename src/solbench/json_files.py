"""Reading a user's JSON file, with one error wording for every command that takes one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from solbench.errors import SolbenchError


def read_json_file(path: Path | str, what: str, error: type[SolbenchError], hint: str = "") -> Any:
    """The parsed content of `path`; a missing or unreadable file raises `error` naming `what` it should be
    (``"rules file"``) and, for a missing one, `hint` (``" (give another with --configs)"``)."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist{hint}") from None
    except (OSError, ValueError) as failure:
        raise error(f"cannot read {what} {path}: {failure}") from None
