"""A transformers model family from its published configuration: random weights, no download, depth-scaled.

The record comes from the same model-configs.json `solbench extract` reads. The whole causal LM is built
(``AutoModelForCausalLM.from_config``), so embedding, every decoder layer, final norm and LM head run as in
the real model. Only depth is ever scaled (``layers``): the widths that decide each kernel's shape stay as
published, so each layer's time split is the real one; what changes is the share of the per-model parts
(embedding lookup, LM head), which the report states.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from solbench.reach.built_model import BuiltModel, DepthScaling, inference_step, training_step
from solbench.reach.errors import ReachError

# Layer-indexed lists in a config must be cut to the scaled depth or transformers refuses the config.
_PER_LAYER_KEYS = ("layer_types", "mlp_only_layers", "no_rope_layers")


def transformer_config(record: dict[str, Any], layers: int | None, overrides: dict[str, Any] | None = None):
    """(transformers config, scaling notes) for a record, with ``num_hidden_layers`` cut to ``layers``."""
    from solbench.suite.extract.configs import config_values
    from solbench.suite.extract.errors import require_transformers

    transformers = require_transformers()
    model_type = record.get("model_type")
    if not model_type or model_type not in transformers.CONFIG_MAPPING:
        raise ReachError(
            f"model {record.get('name')!r}: model_type {model_type!r} is not a transformers "
            "architecture this install knows; pick a record with a model_type such as llama or qwen3"
        )
    values = config_values(record)
    values.update(overrides or {})
    notes = []
    published = values.get("num_hidden_layers")
    if layers is not None and published and layers < published:
        values["num_hidden_layers"] = layers
        for key in _PER_LAYER_KEYS:
            if isinstance(values.get(key), list):
                values[key] = values[key][:layers]
        notes.append(
            f"depth scaled: {layers} of {published} decoder layers (widths as published); the embedding "
            f"and LM head weigh {published / layers:.1f}x more than in the full model"
        )
    if overrides:
        notes.append(f"configuration overridden: {', '.join(f'{k}={v}' for k, v in overrides.items())}")
    values.pop("model_type", None)
    try:
        config = transformers.CONFIG_MAPPING[model_type](**values)
    except (TypeError, ValueError) as error:
        raise ReachError(f"cannot build the {model_type} config of {record.get('name')!r}: {error}") from None
    config._attn_implementation = "sdpa"
    config.use_cache = False
    return config, notes


def build_transformer(
    record: dict[str, Any],
    *,
    mode: str,
    batch: int,
    seq: int,
    layers: int | None,
    device: str,
    dtype: str,
    overrides: dict[str, Any] | None = None,
) -> BuiltModel:
    """The causal LM of ``record`` and one step of it on ``batch`` sequences of ``seq`` random tokens."""
    import torch
    from transformers import AutoModelForCausalLM

    config, notes = transformer_config(record, layers, overrides)
    published = record.get("num_hidden_layers")
    depth = (
        DepthScaling("*DecoderLayer", config.num_hidden_layers, published)
        if published and config.num_hidden_layers < published
        else None
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    tokens = torch.randint(0, config.vocab_size, (batch, seq), device=device)
    if mode == "training":
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
        step = training_step(
            model,
            (tokens,),
            lambda out: torch.nn.functional.cross_entropy(out.logits.flatten(0, 1).float(), tokens.flatten()),
            optimizer,
        )
        notes.append("training step: forward, next-token cross-entropy, backward, AdamW (foreach)")
    else:
        model.eval()
        step = inference_step(model, (tokens,))
        notes.append("inference step: one prefill forward of the whole sequence, no KV cache")
    return BuiltModel(
        name=record["name"],
        kind="transformers",
        module=model,
        step=step,
        scaling=notes,
        config={
            "model_type": config.model_type,
            "num_hidden_layers": config.num_hidden_layers,
            "hidden_size": config.hidden_size,
            "vocab_size": config.vocab_size,
            "batch": batch,
            "seq": seq,
            "dtype": dtype,
        },
        depth=depth,
    )


def find_transformer_record(name: str, configs: Path) -> dict[str, Any]:
    from solbench.suite.extract.configs import find_record
    from solbench.suite.extract.errors import ExtractError

    try:
        return find_record(name, configs)
    except ExtractError as error:
        raise ReachError(str(error)) from None
