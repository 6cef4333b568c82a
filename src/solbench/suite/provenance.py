"""A problem folder's ``provenance.json``: where the problem comes from, and what keeps it up to date.

Every folder of the suite has one. It names the real model (as in ``suite/data/model-configs.json``), the
published configuration values the problem cites (a test checks each one against that file), and either

- the **recipe** that generates the folder (a module of the checkout's ``suite_recipes/``) with the sha256 of
  each file it wrote (``generated``), so the build can tell a folder edited by hand since and refuse to
  overwrite it; or
- no recipe (``"recipe": null``): the folder is its own source, edited by hand (``history`` may say what made
  it first).

The definition's ``origin:`` tag stays as the folder was first made (upstream tools read the tags); this file
says what maintains it now.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError, model_validator

from solbench.suite.errors import ProvenanceError

PROVENANCE_FILE = "provenance.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ModelSource(_Strict):
    """The real model a problem is taken from."""

    name: str
    """As in model-configs.json ``name``."""
    hf_id: str | None
    """None where the model has no Hugging Face id."""
    domain: str


class Provenance(_Strict):
    model: ModelSource
    config: dict[str, JsonValue]
    """The published configuration values the problem uses, under model-configs.json's (dotted) key names."""
    recipe: str | None
    """The ``suite_recipes`` module that generates this folder (``l1``, ``llm_breadth``, ``extracted`` ...);
    None: the folder is written by hand and is its own source."""
    generated: dict[str, str] | None = None
    """sha256 of each file the recipe wrote, by file name; present exactly when ``recipe`` is."""
    history: str | None = None
    """What made the folder first, where that is no longer its recipe."""

    @model_validator(mode="after")
    def _generated_with_recipe(self) -> Provenance:
        if (self.recipe is None) != (self.generated is None):
            raise ValueError("'generated' is given exactly when 'recipe' is")
        return self


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_provenance(folder: Path) -> Provenance | None:
    """The folder's provenance; None where it has no provenance.json."""
    path = Path(folder) / PROVENANCE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ProvenanceError(path, f"cannot read: {error}") from None
    try:
        return Provenance.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ProvenanceError(path, f"{where}: {first['msg']}") from None


def provenance_text(provenance: Provenance) -> str:
    """The file's text: ``hf_id`` and ``recipe`` are written even when null, ``generated`` and ``history`` only when
    set."""
    data = provenance.model_dump(mode="json")
    for optional in ("generated", "history"):
        if data[optional] is None:
            del data[optional]
    return json.dumps(data, indent=2) + "\n"


def write_provenance(folder: Path, provenance: Provenance) -> Path:
    path = Path(folder) / PROVENANCE_FILE
    path.write_text(provenance_text(provenance), encoding="utf-8")
    return path


def edited_files(folder: Path, provenance: Provenance) -> list[str]:
    """The generated files of `folder` that differ from (or are missing since) what its recipe wrote."""
    folder = Path(folder)
    return [
        name
        for name, digest in (provenance.generated or {}).items()
        if not (folder / name).is_file() or file_sha256(folder / name) != digest
    ]
