"""One extraction end to end: config values -> module -> torch.export -> standalone reference -> draft.

The generated reference is checked before the draft is returned: on the module's own weights and
an example input it must reproduce the transformers module's output (forward) or autograd's
gradients of it (backward).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from solbench.suite.draft import ModelRef, ProblemDraft
from solbench.suite.extract import modules
from solbench.suite.extract.capture import capture
from solbench.suite.extract.codegen import generate
from solbench.suite.extract.configs import config_values
from solbench.suite.extract.errors import ExtractError, require_transformers
from solbench.suite.extract.provenance import installed_versions, provenance_tags
from solbench.suite.extract.writer import AxisNamer, build_draft
from solbench.suite.naming import model_slug
from solbench.suite.tolerances import tolerance_for

DEFAULT_TOKENS = (1, 7, 32, 128, 255, 512, 1024, 2048)
"""Token counts of a token-layout module when --tokens is not given: decode through prefill, odd sizes mixed in."""

SEQUENCE_SWEEP = ((1, 16), (1, 128), (2, 100), (1, 255), (4, 128), (1, 512), (2, 384), (1, 1024))
"""(batch_size, seq_len) pairs for sequence-layout modules: prefill of one to a few sequences."""
_DTYPES = ("float32", "bfloat16", "float16", "float64")


@dataclass
class Request:
    model: ModelRef
    """Name, hf_id and domain of the model; its config is filled in with the values the module uses."""
    record: dict[str, Any]
    """Published values (a model-configs.json record, or an HF config dict)."""
    architecture: str
    module: str
    dtype: str = "bfloat16"
    backward: bool = False
    set: str | None = None
    tp: int = 1
    tokens: list[int] | None = None
    shapes: list[tuple[int, int]] | None = None
    """(batch_size, seq_len) pairs for sequence-layout modules."""
    name: str | None = None
    extra_tags: list[str] = field(default_factory=list)


def extract(request: Request, progress: Callable[[str], None] = lambda text: None) -> ProblemDraft:
    import torch

    require_transformers()
    versions = installed_versions()
    arch = modules.architecture(request.architecture)
    kind = modules.kind_of(arch, request.module)
    if request.dtype not in _DTYPES:
        raise ExtractError(f"--dtype {request.dtype!r}: use one of {', '.join(_DTYPES)}")
    if request.tp < 1:
        raise ExtractError("--tp must be at least 1")
    dtype = getattr(torch, request.dtype)
    values = config_values(request.record, arch.section)
    config = modules.hf_config(arch, kind, values, request.tp)
    progress(f"building {arch.layer_class}{'.' + kind.path if kind.path else ''} from {type(config).__name__}")
    module = modules.build_module(arch, kind, config)
    modules.initialise(module)
    for parameter in module.parameters():  # buffers (rotary inv_freq) keep their dtype, as in the model
        parameter.data = parameter.data.to(dtype)
    hidden = getattr(config, "hidden_size", None) or config.d_model
    progress(f"capturing with torch.export ({kind.layout} layout, hidden {hidden}, {request.dtype})")
    captured = capture(module, kind.layout, hidden, dtype)
    generated = generate(captured.program)
    progress(
        f"generated a reference over {sum(1 for line in generated.body.splitlines() if 'torch.ops' in line)} "
        "ATen calls" + (f"; {'; '.join(generated.notes)}" if generated.notes else "")
    )

    activation_shape = generated.arguments[0].value.shape
    var_axes = {str(activation_shape[dim]): name for dim, name in captured.var_axes.items()}
    cited = _cited(request.record, arch, kind)
    model = ModelRef(request.model.name, request.model.hf_id, request.model.domain, cited)
    tp_note = ""
    if request.tp > 1:
        sharded = [k for k in kind.shard if k in values]
        tp_note = (
            f" Tensor-parallel shard for TP={request.tp}: "
            + ", ".join(f"{k} {values[k]} / {request.tp} = {values[k] // request.tp}" for k in sharded)
            + " (the output is this rank's partial sum before the all-reduce where the module ends in a "
            "row-parallel projection)."
        )
    router_note = (
        " The router computes its logits, softmax and top-k in float32 (in bfloat16, ties at the top-k "
        "cut would let the expert order decide the routing)."
        if kind.call == "moe"
        else ""
    )
    namer = AxisNamer(_axis_candidates(config, kind, request.tp))
    workloads = _workloads(kind.layout, request)
    pass_text = (
        "backward: the gradients of the output with respect to the input and every weight, given grad_output"
        if request.backward
        else "forward"
    )
    layout_text = (
        "hidden_states are [num_tokens, hidden]"
        if kind.layout == "tokens"
        else "hidden_states are [batch_size, seq_len, hidden]; "
        + (
            "causal self-attention over the sequence (prefill, no KV cache), rotary cos/sin for positions "
            "0..seq_len-1 computed in the reference"
            if arch.decoder
            else "bidirectional self-attention over the sequence"
        )
    )
    description = (
        f"{model.name}: {arch.layer_class}{'.' + kind.path if kind.path else ''} ({kind.name}), "
        f"{pass_text}. Extracted by `solbench extract` from transformers {versions['transformers']} with "
        f"torch.export; {layout_text}.{tp_note}{router_note} Config: "
        + ", ".join(f"{k}={v}" for k, v in cited.items() if not isinstance(v, (dict, list)))
        + "."
    )
    name = request.name or "_".join(
        filter(
            None,
            [
                model_slug(model.name),
                "hf",
                kind.name,
                f"tp{request.tp}" if request.tp > 1 else "",
                "bwd" if request.backward else "",
            ],
        )
    )
    frozen, zero_grads = gradient_plan(module, captured.example, generated, request.backward)
    if frozen or zero_grads:
        progress(
            f"no {'gradient' if request.backward else 'output'} depends on {', '.join(sorted(frozen)) or 'nothing'}"
            f" (held at zero); identically zero gradients left out: {', '.join(sorted(zero_grads)) or 'none'}"
        )
    op_type = kind.op_type + ("_backward" if request.backward else "")  # backward problems say so in op_type
    draft = build_draft(
        generated,
        model=model,
        set_name=request.set or kind.set,
        name=name,
        op_type=op_type,
        description=description,
        namer=namer,
        var_axes=var_axes,
        workloads=workloads,
        backward=request.backward,
        dtype_name=request.dtype,
        extra_tags=[
            f"module:{arch.layer_class}{'.' + kind.path if kind.path else ''}",
            *([f"tp:{request.tp}"] if request.tp > 1 else []),
            *provenance_tags(versions),
            *request.extra_tags,
        ],
        frozen=frozenset(frozen),
        zero_grads=frozenset(zero_grads),
    )
    if not arch.decoder and "seq_len" in draft.axes:  # encoders attend both ways over their patches or frames
        draft.axes["seq_len"]["description"] = "Tokens per sequence (bidirectional: patches or frames)"
    expert_axis = next((a for a in ("num_experts", "num_local_experts") if a in draft.axes), None)
    if kind.call == "moe" and expert_axis:  # experts are interchangeable: validate reverses their order
        draft.extra_tags.append(f"symmetric:{expert_axis}")
    progress("checking the reference against the transformers module")
    check_reference(draft.reference, module, captured.example, generated, request.backward, frozen, zero_grads)
    return draft


def _cited(record: dict[str, Any], arch, kind) -> dict[str, Any]:
    section = record.get(arch.section, {}) if arch.section else record
    prefix = f"{arch.section}." if arch.section else ""
    return {prefix + key: section[key] for key in kind.cites if key in section}


def _axis_candidates(config, kind, tp: int) -> list[tuple[str, int, str]]:
    def get(key):
        value = getattr(config, key, None)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def shard_note(key):
        return f" (published / {tp}: TP={tp} shard)" if tp > 1 and key in kind.shard else ""

    found: list[tuple[str, int, str]] = []
    keys = (
        "hidden_size",
        "d_model",
        "intermediate_size",
        "moe_intermediate_size",
        "encoder_ffn_dim",
        "head_dim",
        "num_local_experts",
        "num_experts",
    )
    for key in sorted(keys, key=lambda k: (k not in ("hidden_size", "d_model"), k not in kind.cites)):
        value = get(key)
        if value:
            found.append((key, value, key + shard_note(key)))
    heads, kv_heads, head_dim = get("num_attention_heads"), get("num_key_value_heads"), get("head_dim")
    if heads and head_dim:
        found.append(("q_size", heads * head_dim, "num_attention_heads x head_dim" + shard_note("num_attention_heads")))
    if kv_heads and head_dim:
        found.append(
            ("kv_size", kv_heads * head_dim, "num_key_value_heads x head_dim" + shard_note("num_key_value_heads"))
        )
    if heads and head_dim and kv_heads:
        found.append(
            ("qkv_size", (heads + 2 * kv_heads) * head_dim, "(num_attention_heads + 2 num_key_value_heads) x head_dim")
        )
    for key in ("intermediate_size", "moe_intermediate_size"):
        value = get(key)
        if value:
            found.append((f"gate_up_{key}", 2 * value, f"2 x {key}" + shard_note(key)))
    return found


def _workloads(layout: str, request: Request) -> list[dict[str, int]]:
    if layout == "tokens":
        if request.shapes:
            raise ExtractError("--shapes is for sequence-layout modules (attention, layers); use --tokens")
        values = request.tokens or list(DEFAULT_TOKENS)
        if any(v < 1 for v in values):
            raise ExtractError("--tokens: every count must be at least 1")
        return [{"num_tokens": v} for v in dict.fromkeys(values)]
    if request.tokens:
        raise ExtractError("--tokens is for token-layout modules (norms, MLPs, MoE); use --shapes BxS,...")
    pairs = request.shapes or list(SEQUENCE_SWEEP)
    if any(b < 1 or s < 1 for b, s in pairs):
        raise ExtractError("--shapes: batch and sequence sizes must be at least 1")
    return [{"batch_size": b, "seq_len": s} for b, s in dict.fromkeys(pairs)]


def load_reference(source: str):
    namespace: dict[str, Any] = {"__name__": "solbench_extracted_reference"}
    exec(compile(source, "<extracted reference>", "exec"), namespace)
    return namespace


def gradient_plan(module, example, generated, backward: bool = True) -> tuple[set[str], set[str]]:
    """(weights no gradient -- forward: no output -- depends on, inputs whose gradient is identically zero),
    found by perturbing each weight of a copy of the module: in float64, or in float32 for modules with
    ops that have no float64 kernel (grouped GEMMs)."""
    try:
        return _plan(module, example, generated, backward, "float64", 1e-9)
    except RuntimeError:
        return _plan(module, example, generated, backward, "float32", 1e-5)


def _plan(module, example, generated, backward: bool, dtype_name: str, rtol: float) -> tuple[set[str], set[str]]:
    import copy

    import torch

    dtype = getattr(torch, dtype_name)
    twin = copy.deepcopy(module).to(dtype)
    tensors = dict(twin.named_parameters())
    tensors.update(dict(twin.named_buffers()))
    arguments = generated.arguments
    weights = [tensors[a.target] for a in arguments[1:]]
    base = [example.to(dtype)] + [w.detach().clone() for w in weights]
    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        grad_output = torch.randn(twin(base[0]).shape, generator=generator, dtype=dtype)

    def gradients(values):
        with torch.no_grad():
            for weight, value in zip(weights, values[1:]):
                weight.copy_(value)
        x = values[0].clone().requires_grad_()
        leaves = [x] + [w.requires_grad_() for w in weights]
        if not backward:
            with torch.no_grad():
                return [twin(values[0])]
        grads = torch.autograd.grad(twin(x), leaves, grad_output, allow_unused=True)
        return [torch.zeros_like(leaf) if g is None else g.detach() for leaf, g in zip(leaves, grads)]

    reference = gradients(base)
    largest = max(float(g.abs().max()) for g in reference)
    zero = (
        {a.name for a, g in zip(arguments, reference) if float(g.abs().max()) <= rtol * 1e-3 * largest}
        if backward
        else set()
    )
    frozen = set()
    for index in range(1, len(arguments)):
        values = list(base)
        values[index] = base[index] + torch.randn(base[index].shape, generator=generator, dtype=dtype)
        perturbed = gradients(values)
        if all(torch.allclose(p, r, rtol=rtol, atol=rtol * 1e-3 * largest) for p, r in zip(perturbed, reference)):
            frozen.add(arguments[index].name)
    return frozen, zero


def check_reference(
    source: str,
    module,
    example,
    generated,
    backward: bool,
    frozen: frozenset | set = frozenset(),
    zero_grads: frozenset | set = frozenset(),
) -> None:
    """The generated reference must reproduce the module (or autograd through it) on its own weights."""
    import torch

    run = load_reference(source)["run"]
    weights = [a.value for a in generated.arguments[1:] if a.name not in frozen]
    tolerance = tolerance_for(str(example.dtype).removeprefix("torch."))
    atol, rtol = tolerance["max_atol"], tolerance["max_rtol"]
    if not backward:
        with torch.no_grad():
            expected = module(example)
            got = run(example, *weights)
        pairs = [(got, expected)]
    else:
        params = dict(module.named_parameters())
        params.update(dict(module.named_buffers()))
        leaves = [example.detach().requires_grad_()] + [params[a.target] for a in generated.arguments[1:]]
        grad_output = torch.randn(module(example).shape, generator=torch.Generator().manual_seed(2)).to(example.dtype)
        out = module(leaves[0])
        wanted = [leaf for leaf, a in zip(leaves, generated.arguments) if a.name not in zero_grads]
        expected = torch.autograd.grad(out, wanted, grad_output)
        got = run(example, *weights, grad_output)
        pairs = list(zip(got, expected))
    for got_tensor, expected_tensor in pairs:
        if got_tensor.shape != expected_tensor.shape or not torch.allclose(
            got_tensor.float(), expected_tensor.float(), atol=atol, rtol=rtol
        ):
            raise ExtractError(
                "internal check failed: the generated reference does not reproduce the "
                "transformers module; please report this module and configuration"
            )
