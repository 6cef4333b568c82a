"""Which set (L1, L2, Quant, …) a problem belongs to: the one rule every command uses."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from solbench.spec.definition import tag_value

DEFAULT_SET = "all"
"""The set of a problem that names none and does not sit in a set's folder."""


def problem_set(tags: Iterable[object], folder: Path | None = None, suite_root: Path | None = None) -> str:
    """The problem's ``set:NAME`` tag; else, for a problem folder inside `suite_root`, the first folder
    below the root (``problems/L1/rmsnorm`` is in ``L1``); else ``"all"``.

    `tags` may be a Definition's tags or the raw list from a ``definition.json`` (non-strings are
    skipped). A folder directly under the root, the root itself, or a folder outside it has no set
    folder. The op_type is never a set.
    """
    tagged = tag_value(tags, "set")
    if tagged:
        return tagged
    if folder is None or suite_root is None:
        return DEFAULT_SET
    try:
        relative = Path(folder).resolve().relative_to(Path(suite_root).resolve())
    except ValueError:
        return DEFAULT_SET
    return relative.parts[0] if len(relative.parts) > 1 else DEFAULT_SET
