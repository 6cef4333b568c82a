"""Small JSON records kept in the cache folder under a key made from their content.

The analyser keeps what it learnt once and a later process may reuse (precision decisions, where a problem's
recording started): each record is a pydantic model in `cache_dir()/FOLDER/ab/KEY.json`, KEY the hash of
everything that decides it. A record that cannot be read is missing (the work is done again); one that cannot be
written costs the same, nothing else; a write is atomic (atomic_files.py), so a concurrent reader sees a whole
record or none.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from solbench.atomic_files import write_whole
from solbench.cache_dir import cache_dir

Record = TypeVar("Record", bound=BaseModel)


def record_key(material: dict[str, Any]) -> str:
    """The hash of `material` (JSON, keys sorted): equal material, equal key."""
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def record_path(folder: str, key: str) -> Path:
    return cache_dir() / folder / key[:2] / f"{key}.json"


def read_record(model: type[Record], folder: str, key: str) -> Record | None:
    try:
        return model.model_validate_json(record_path(folder, key).read_bytes())
    except (OSError, ValueError):
        return None


def write_record(folder: str, key: str, record: BaseModel) -> None:
    write_whole(record_path(folder, key), record.model_dump_json().encode())  # not written: done again next time
