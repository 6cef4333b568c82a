"""`solbench extract`: a module of a real model (transformers, random weights) -> a problem folder."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from solbench.cli.common import UsageError


def _ints(text: str | None, option: str) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"{option}: expected comma-separated integers, got {text!r}") from None


def _pairs(text: str | None) -> list[tuple[int, int]] | None:
    if not text:
        return None
    pairs = []
    for item in filter(None, (v.strip() for v in text.split(","))):
        parts = item.lower().split("x")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise UsageError(f"--shapes: expected BATCHxSEQ items such as 1x128,2x255, got {item!r}")
        pairs.append((int(parts[0]), int(parts[1])))
    return pairs


def extract_module(
    model: str | None = typer.Option(None, "--model", "-m", help="Model name as in the configs file."),
    module: str | None = typer.Option(
        None, "--module", help="Module kind: norm, mlp, attention, moe, decoder_layer, encoder_layer (see --list)."
    ),
    out: Path = typer.Option(
        Path("problems"), "--output", "--out", "-o", help="Root folder; the problem lands in OUT/SET/NAME."
    ),
    configs: Path | None = typer.Option(
        None, "--configs", help="model-configs.json (default: the published configurations vendored with solbench)."
    ),
    config: Path | None = typer.Option(None, "--config", help="An HF-style config JSON instead of --model."),
    architecture: str | None = typer.Option(
        None, "--architecture", "-a", help="Architecture (model_type); default the record's."
    ),
    backward: bool = typer.Option(False, "--backward", help="Gradients w.r.t. the input and every weight."),
    set_name: str | None = typer.Option(None, "--set", help="L1, L2, Quant or FIB (default: L1 for norms, else L2)."),
    dtype: str = typer.Option("bfloat16", "--dtype", help="float32, bfloat16, float16 or float64."),
    tp: int = typer.Option(1, "--tp", help="Tensor-parallel degree: shard heads / intermediate sizes."),
    tokens: str | None = typer.Option(
        None, "--tokens", help="num_tokens sweep for token-layout modules, e.g. 1,7,32,128."
    ),
    shapes: str | None = typer.Option(
        None, "--shapes", help="BATCHxSEQ sweep for sequence-layout modules, e.g. 1x128,2x255."
    ),
    name: str | None = typer.Option(None, "--name", help="Problem name (default derived)."),
    domain: str = typer.Option("language", "--domain", help="Domain for a --config model."),
    list_kinds: bool = typer.Option(False, "--list", help="List architectures and their module kinds, then exit."),
) -> None:
    """Build a module of a real model from its published configuration (random weights, no download),
    capture it with torch.export and write a standalone problem folder."""
    from solbench.suite.draft import ModelRef, write_problem
    from solbench.suite.extract import Request, extract
    from solbench.suite.extract.configs import DEFAULT_CONFIGS, find_record, read_config_file
    from solbench.suite.extract.modules import supported

    if list_kinds:
        for arch, kinds in supported().items():
            print(f"{arch}: {', '.join(kinds)}")
        return
    if not module:
        raise UsageError("--module is required (see --list)")
    if bool(model) == bool(config):
        raise UsageError("give exactly one of --model NAME or --config FILE.json")
    if model:
        record = find_record(model, configs or DEFAULT_CONFIGS)
        ref = ModelRef(record["name"], record.get("hf_id") or "", record["domain"], {})
    else:
        assert config is not None, "exactly one of --model and --config (checked above)"
        record = read_config_file(config)
        try:
            ref = ModelRef(record.get("name", config.stem), record.get("_name_or_path", ""), domain, {})
        except ValueError as error:
            raise UsageError(str(error)) from None
    # No name at all ("") is refused by extract, with a message that asks for --architecture.
    request = Request(
        model=ref,
        record=record,
        architecture=architecture or record.get("model_type") or "",
        module=module,
        dtype=dtype,
        backward=backward,
        set=set_name,
        tp=tp,
        tokens=_ints(tokens, "--tokens"),
        shapes=_pairs(shapes),
        name=name,
    )
    try:
        draft = extract(request, progress=lambda text: print(f"extract: {text}", file=sys.stderr))
    except ValueError as error:  # a draft field the schema refuses (set name, ...)
        raise UsageError(str(error)) from None
    folder = write_problem(draft, out)
    print(f"extract: wrote {len(draft.workloads)} workloads", file=sys.stderr)
    print(folder)
