"""Model records: a record of model-configs.json (or a config JSON of one's own) -> a transformers config.

Only values are read, never weights: the config class is built from the record's published keys
(``LlamaConfig(hidden_size=4096, ...)``), so nothing is downloaded.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from solbench.json_files import read_json_file
from solbench.suite.extract.errors import ExtractError

DEFAULT_CONFIGS = Path(__file__).resolve().parents[1] / "data" / "model-configs.json"
"""The published configurations vendored with solbench (``solbench/suite/data/model-configs.json``): each
record names the file it was read from (``source``, a commit-pinned URL or the model's page) and the
kind of source (``source_kind``); the file's ``notes`` say how it was compiled."""

# Keys of a record that describe it rather than configure the model.
_METADATA = {
    "name",
    "hf_id",
    "domain",
    "family",
    "source",
    "source_kind",
    "notes",
    "derived",
    "norm_type",
    "rope_scaling_type",
    "architectures",
    "torch_dtype",
    "layer_types_counts",
    "published_quantization",
}


def load_records(path: Path) -> dict[str, dict[str, Any]]:
    """``name -> record`` of a model-configs.json file (``{"models": [...]}``) or of one record."""
    data = read_json_file(path, "model configs file", ExtractError, " (give another with --configs)")
    models = data.get("models") if isinstance(data, dict) else None
    if models is None:
        raise ExtractError(f"{path}: expected a JSON object with a 'models' list")
    return {m["name"]: m for m in models if isinstance(m, dict) and "name" in m}


def find_record(name: str, path: Path) -> dict[str, Any]:
    records = load_records(path)
    if name in records:
        return records[name]
    folded = {k.lower(): k for k in records}
    if name.lower() in folded:
        return records[folded[name.lower()]]
    close = [k for k in records if name.lower() in k.lower()][:5]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ExtractError(f"unknown model {name!r} in {path}{hint}")


def read_config_file(path: Path) -> dict[str, Any]:
    """An HF-style config dict of one's own (``config.json``)."""
    data = read_json_file(path, "config file", ExtractError)
    if not isinstance(data, dict):
        raise ExtractError(f"{path}: expected a JSON object of config values")
    return data


def config_values(record: dict[str, Any], section: str | None = None) -> dict[str, Any]:
    """The configuration keys of a record (or of one nested section such as ``vision_config``)."""
    values = record.get(section, {}) if section else record
    if section and not isinstance(values, dict):
        raise ExtractError(f"{record.get('name', 'config')}: has no {section}")
    # Copies: config classes normalise nested values (rope_scaling) in place, the record must stay as published.
    return {k: copy.deepcopy(v) for k, v in values.items() if k not in _METADATA and not k.endswith("_config")}


def lookup(record: dict[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(dotted)
        value = value[part]
    return value
