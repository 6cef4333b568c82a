"""A problem's reference as a real Python file beside its definition (``reference.py``).

definition.json keeps the reference as a string, because upstream tools read it there; the file beside it
is what people read, lint, import and edit. The builder writes both from one text. For a folder edited by
hand, `sync_reference` regenerates the definition's string from the file, and `reference_mismatch` (a
`solbench validate` check) says when the two have drifted apart.
"""

from __future__ import annotations

import json
from pathlib import Path

from solbench.spec.errors import SpecError

REFERENCE_FILE = "reference.py"


def write_reference(folder: Path, reference: str) -> Path:
    path = Path(folder) / REFERENCE_FILE
    path.write_text(reference, encoding="utf-8")
    return path


def reference_mismatch(folder: Path, reference: str | None = None) -> str | None:
    """Why the folder's reference.py and its definition's ``reference`` (read from definition.json unless the
    caller has it loaded) differ; None where they agree or there is no reference.py."""
    path = Path(folder) / REFERENCE_FILE
    if not path.is_file():
        return None
    if reference is None:
        reference = json.loads((Path(folder) / "definition.json").read_text(encoding="utf-8")).get("reference")
    if reference == path.read_text(encoding="utf-8"):
        return None
    return (
        f"{path} differs from the 'reference' of {path.parent / 'definition.json'}: run "
        f"`solbench suite sync-references {path.parent}` after editing reference.py (recipe problems: edit "
        "the recipe and run scripts/build-suite)"
    )


def sync_reference(folder: Path) -> bool:
    """Set the definition's ``reference`` to reference.py's text; True when it changed."""
    folder = Path(folder)
    source, definition_path = folder / REFERENCE_FILE, folder / "definition.json"
    if not source.is_file():
        raise SpecError(source, None, "no reference.py in this problem folder")
    try:
        definition = json.loads(definition_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SpecError(definition_path, None, f"cannot read the definition: {error}") from error
    text = source.read_text(encoding="utf-8")
    if definition.get("reference") == text:
        return False
    definition["reference"] = text
    definition_path.write_text(json.dumps(definition, indent=2) + "\n", encoding="utf-8")
    return True
