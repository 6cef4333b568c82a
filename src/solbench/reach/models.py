"""MODEL argument -> a built model: a bundled DLRM, a user's ``module:PATH.py:factory``, or a transformers record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solbench.reach.built_model import BuiltModel
from solbench.reach.dlrm_model import DEFAULT_MAX_ROWS, DLRM_NAMES, build_dlrm
from solbench.reach.errors import ReachError
from solbench.reach.transformer_model import build_transformer, find_transformer_record
from solbench.reach.user_model import PREFIX, build_user_model

CPU_DEFAULT_LAYERS = 2
"""Decoder layers kept by default on the CPU (depth only; see transformer_model.py)."""


@dataclass(frozen=True)
class ModelRequest:
    model: str
    mode: str = "inference"
    device: str = "cpu"
    batch: int | None = None
    seq: int | None = None
    layers: int | None = None
    """Decoder layers to keep; None: all on CUDA, CPU_DEFAULT_LAYERS on the CPU. 0 means all."""
    max_rows: int = DEFAULT_MAX_ROWS
    dtype: str | None = None
    configs: Path | None = None
    overrides: dict[str, Any] | None = None
    """Config values replacing the record's (tests build tiny widths this way; the report says so)."""


def build_model(request: ModelRequest) -> BuiltModel:
    if request.mode not in ("inference", "training"):
        raise ReachError(f"--mode {request.mode!r}: expected inference or training")
    if request.device not in ("cpu", "cuda"):
        raise ReachError(f"--device {request.device!r}: expected cpu or cuda")
    if request.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ReachError("--device cuda: no CUDA device here; use --device cpu")
    if request.model.startswith(PREFIX):
        return build_user_model(request.model, mode=request.mode, device=request.device)
    if request.model.lower() in DLRM_NAMES:
        return build_dlrm(
            mode=request.mode,
            batch=request.batch or 2048,
            device=request.device,
            max_rows=request.max_rows,
            overrides=request.overrides,
        )
    from solbench.suite.extract.configs import DEFAULT_CONFIGS

    record = find_transformer_record(request.model, request.configs or DEFAULT_CONFIGS)
    layers = request.layers
    if layers is None:
        layers = CPU_DEFAULT_LAYERS if request.device == "cpu" else None
    dtype = request.dtype or ("float32" if request.device == "cpu" else "bfloat16")
    return build_transformer(
        record,
        mode=request.mode,
        batch=request.batch or 1,
        seq=request.seq or 512,
        layers=layers or None,
        device=request.device,
        dtype=dtype,
        overrides=request.overrides,
    )
