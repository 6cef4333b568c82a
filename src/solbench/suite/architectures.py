"""Which model architecture a problem's ``model:`` tag names, so variants of one architecture count once.

Two records of the published model configurations are one architecture when their names differ only by a
release suffix (``-Instruct``, ``-it``, ``-Chat``, ``-Base``, ``-Thinking``, ``-v0.1``, ``-preview`` ...; so
Qwen2.5-7B and Qwen2.5-7B-Instruct, Mistral-7B-v0.1 and -v0.3) or when their configurations are identical
apart from names, ids and sources (DeepSeek-V3 and DeepSeek-R1). A tag that names no record is its own
architecture.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from solbench.suite.extract.configs import DEFAULT_CONFIGS, load_records

_VARIANT_SUFFIX = re.compile(r"[- ](Instruct|it|Chat|Base|Thinking|v\d+(\.\d+)*|preview)\b.*$")
_NOT_CONFIGURATION = {
    "name",
    "hf_id",
    "source",
    "source_kind",
    "notes",
    "derived_note",
    "model_version",
    "published_quantization",
    "torch_dtype",
}


def base_name(model: str) -> str:
    """The model's name without its release suffix."""
    return _VARIANT_SUFFIX.sub("", model)


@lru_cache(maxsize=4)
def _architecture_table(configs: Path) -> dict[str, str]:
    """Record name -> architecture key, for every record of a model-configs.json file."""
    records = load_records(configs)
    by_configuration: dict[str, str] = {}
    table: dict[str, str] = {}
    for name in sorted(records):
        record = records[name]
        configuration = json.dumps(
            {k: v for k, v in record.items() if k not in _NOT_CONFIGURATION}, sort_keys=True, default=str
        )
        table[name] = by_configuration.setdefault(configuration, base_name(name))
    return table


def architecture_of(model: str, configs: Path = DEFAULT_CONFIGS) -> str:
    return _architecture_table(configs).get(model, base_name(model))


def architectures(models: list[str], configs: Path = DEFAULT_CONFIGS) -> set[str]:
    return {architecture_of(model, configs) for model in models}
