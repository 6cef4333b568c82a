"""Which modules of which architectures can be extracted, and how each is built and called.

Every module is taken from one real transformers layer (``LlamaDecoderLayer(config, layer_idx)``,
``ViTLayer(config)`` ...) built from configuration values with random weights; a kind names the
sub-module by its attribute path in that layer (``mlp``, ``self_attn``, ``input_layernorm``, or the
whole layer). `build_module` wraps it so that its forward takes one activation tensor:

- ``tokens`` layout: ``hidden_states [num_tokens, hidden]`` (norms, MLPs, MoE blocks);
- ``sequence`` layout: ``hidden_states [batch_size, seq_len, hidden]`` (attention, whole layers).
  Decoder attention is causal self-attention over the sequence (prefill, no KV cache); its rotary
  position embedding (cos, sin for positions 0..seq_len-1) is computed inside the wrapper by the
  model's own rotary module, so the captured program starts from the hidden states.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any

from solbench.suite.extract.errors import ExtractError, require_transformers
from solbench.suite.extract.provenance import installed_versions


@dataclass(frozen=True)
class Kind:
    name: str
    path: str
    """Attribute path of the module inside the layer; '' is the whole layer."""
    layout: str
    """'tokens' or 'sequence'."""
    op_type: str
    set: str
    cites: tuple[str, ...]
    """Config keys the module's shapes and constants use (cited where the record has them)."""
    shard: tuple[str, ...] = ()
    """Config keys divided by the tensor-parallel degree (``--tp``)."""
    call: str = "plain"
    """'plain', 'attention' (position embeddings and mask), 'layer' (same, for a decoder layer), 'moe'."""
    no_shard: str = ""
    """Why this module has no tensor-parallel shard that is a function of one rank's inputs ('' if it has one
    or simply shards nothing)."""


@dataclass(frozen=True)
class Architecture:
    name: str
    modeling: str
    """transformers module holding the classes, e.g. ``transformers.models.llama.modeling_llama``."""
    config_class: str
    layer_class: str
    kinds: dict[str, Kind]
    section: str | None = None
    """Nested config section the layer reads (``vision_config`` for CLIP)."""
    attention: str = "sdpa"
    """Attention implementation: 'sdpa' (causal by is_causal) or 'eager' (explicit additive mask)."""
    decoder: bool = True
    """Layers take rotary position embeddings and causal attention."""
    layer_args: str = "config, layer_idx"
    config_defaults: dict[str, Any] = field(default_factory=dict)
    config_renames: dict[str, str] = field(default_factory=dict)
    """Record key -> config class keyword, where they differ."""


_LM_ATTENTION_KEYS = (
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "rope_theta",
    "attention_bias",
    "max_position_embeddings",
)
_LM_MLP_KEYS = ("hidden_size", "intermediate_size", "hidden_act")


_LAYER_NO_SHARD = (
    "a TP rank's attention and MLP outputs are partial sums that the all-reduce completes before "
    "the residual add and the next norm; a rank's layer is not a function of its own inputs "
    "(extract the attention or the MLP shard instead)"
)
_FULL_QK_NORM_NO_SHARD = (
    "q_norm/k_norm normalise over the full num_heads x head_dim projection; a rank holds "
    "1/TP of its columns, so its statistic needs the all-gathered projection"
)


def _decoder_kinds(
    *,
    norm_path: str = "input_layernorm",
    qk_norm: bool = False,
    qk_norm_full: bool = False,
    moe: bool = False,
    extra_attention: tuple[str, ...] = (),
) -> dict[str, Kind]:
    """``qk_norm``: per-head q/k RMSNorm (Qwen3); ``qk_norm_full``: over the whole projection (OLMo-2)."""
    qk_norm = qk_norm or qk_norm_full
    attention = _LM_ATTENTION_KEYS + extra_attention + (("rms_norm_eps",) if qk_norm else ())
    heads = ("num_attention_heads", "num_key_value_heads")
    if moe:
        mlp_keys = (
            "hidden_size",
            "moe_intermediate_size",
            "intermediate_size",
            "num_experts",
            "num_experts_per_tok",
            "norm_topk_prob",
            "hidden_act",
        )
        ffn = Kind(
            "moe", "mlp", "tokens", "moe", "L2", mlp_keys, ("moe_intermediate_size", "intermediate_size"), call="moe"
        )
    else:
        ffn = Kind("mlp", "mlp", "tokens", "mlp", "L2", _LM_MLP_KEYS, ("intermediate_size",))
    layer_keys = tuple(dict.fromkeys(attention + ffn.cites + ("rms_norm_eps",)))
    return {
        "norm": Kind("norm", norm_path, "tokens", "rmsnorm", "L1", ("hidden_size", "rms_norm_eps")),
        ffn.name: ffn,
        "attention": Kind(
            "attention",
            "self_attn",
            "sequence",
            "attention",
            "L2",
            attention,
            () if qk_norm_full else heads,
            call="attention",
            no_shard=_FULL_QK_NORM_NO_SHARD if qk_norm_full else "",
        ),
        "decoder_layer": Kind(
            "decoder_layer",
            "",
            "sequence",
            "decoder_layer",
            "L2",
            layer_keys,
            (),
            call="layer",
            no_shard=_LAYER_NO_SHARD,
        ),
    }


def _lm(name: str, package: str, prefix: str, **options) -> Architecture:
    kind_options = {
        k: options.pop(k) for k in ("norm_path", "qk_norm", "qk_norm_full", "moe", "extra_attention") if k in options
    }
    return Architecture(
        name,
        f"transformers.models.{package}.modeling_{package}",
        f"{prefix}Config",
        f"{prefix}DecoderLayer",
        _decoder_kinds(**kind_options),
        **options,
    )


def _encoder(
    name: str,
    package: str,
    prefix: str,
    layer_class: str,
    *,
    hidden: str,
    heads: str,
    ffn: str,
    act: str,
    eps: str | None,
    attention: str,
    mlp: str | None,
    norm: str,
    section: str | None = None,
    extra: tuple[str, ...] = (),
) -> Architecture:
    eps_keys = (eps,) if eps else ()
    kinds = {
        "norm": Kind("norm", norm, "tokens", "layernorm", "L1", (hidden,) + eps_keys),
        "attention": Kind("attention", attention, "sequence", "attention", "L2", (hidden, heads) + extra),
        "encoder_layer": Kind(
            "encoder_layer", "", "sequence", "encoder_layer", "L2", (hidden, heads, ffn, act) + eps_keys + extra
        ),
    }
    if mlp:
        kinds["mlp"] = Kind("mlp", mlp, "tokens", "mlp", "L2", (hidden, ffn, act))
    return Architecture(
        name,
        f"transformers.models.{package}.modeling_{package}",
        f"{prefix}Config",
        layer_class,
        kinds,
        section=section,
        decoder=False,
        layer_args="config",
    )


ARCHITECTURES: dict[str, Architecture] = {
    a.name: a
    for a in [
        _lm("llama", "llama", "Llama", extra_attention=("rope_scaling",)),
        _lm("mistral", "mistral", "Mistral"),
        _lm("qwen2", "qwen2", "Qwen2"),
        _lm("qwen3", "qwen3", "Qwen3", qk_norm=True),
        _lm(
            "gemma2",
            "gemma2",
            "Gemma2",
            attention="eager",
            extra_attention=("query_pre_attn_scalar", "attn_logit_softcapping"),
        ),
        _lm("phi3", "phi3", "Phi3"),
        _lm("olmo2", "olmo2", "Olmo2", norm_path="post_attention_layernorm", qk_norm_full=True),
        _lm("granite", "granite", "Granite", extra_attention=("attention_multiplier", "residual_multiplier")),
        _lm(
            "mixtral",
            "mixtral",
            "Mixtral",
            moe=True,
            config_renames={"num_experts": "num_local_experts"},
            config_defaults={"experts_implementation": "grouped_mm"},
        ),
        _lm(
            "qwen3_moe",
            "qwen3_moe",
            "Qwen3Moe",
            moe=True,
            qk_norm=True,
            config_defaults={"experts_implementation": "grouped_mm"},
        ),
        _encoder(
            "vit",
            "vit",
            "ViT",
            "ViTLayer",
            hidden="hidden_size",
            heads="num_attention_heads",
            ffn="intermediate_size",
            act="hidden_act",
            eps="layer_norm_eps",
            attention="attention",
            mlp="mlp",
            norm="layernorm_before",
            extra=("qkv_bias",),
        ),
        _encoder(
            "clip",
            "clip",
            "CLIPVision",
            "CLIPEncoderLayer",
            hidden="hidden_size",
            heads="num_attention_heads",
            ffn="intermediate_size",
            act="hidden_act",
            eps="layer_norm_eps",
            attention="self_attn",
            mlp="mlp",
            norm="layer_norm1",
            section="vision_config",
        ),
        _encoder(
            "wav2vec2",
            "wav2vec2",
            "Wav2Vec2",
            "Wav2Vec2EncoderLayer",
            hidden="hidden_size",
            heads="num_attention_heads",
            ffn="intermediate_size",
            act="hidden_act",
            eps="layer_norm_eps",
            attention="attention",
            mlp="feed_forward",
            norm="layer_norm",
        ),
        _encoder(
            "whisper",
            "whisper",
            "Whisper",
            "WhisperEncoderLayer",
            hidden="d_model",
            heads="encoder_attention_heads",
            ffn="encoder_ffn_dim",
            act="activation_function",
            eps=None,
            attention="self_attn",
            mlp=None,
            norm="self_attn_layer_norm",
        ),
    ]
}
_CLIP_CONFIG = "CLIPVisionConfig"


def architecture(name: str | None) -> Architecture:
    if not name:
        raise ExtractError(
            f"the record has no model_type; name the architecture with --architecture ({', '.join(ARCHITECTURES)})"
        )
    if name not in ARCHITECTURES:
        raise ExtractError(
            f"architecture {name!r} is not supported by solbench extract (supported: {', '.join(ARCHITECTURES)})"
        )
    return ARCHITECTURES[name]


def kind_of(arch: Architecture, module: str) -> Kind:
    if module not in arch.kinds:
        raise ExtractError(f"architecture {arch.name} has no module kind {module!r} (it has: {', '.join(arch.kinds)})")
    return arch.kinds[module]


def supported() -> dict[str, list[str]]:
    """architecture -> module kinds, for ``solbench extract --list``."""
    return {name: list(arch.kinds) for name, arch in ARCHITECTURES.items()}


def hf_config(arch: Architecture, kind: Kind, values: dict[str, Any], tp: int = 1):
    """The transformers config for these values, with a tensor-parallel shard of the kind's sharded keys."""
    transformers = require_transformers()
    values = {arch.config_renames.get(k, k): v for k, v in values.items()}
    values = {**arch.config_defaults, **values}
    if arch.decoder and "head_dim" not in values and "hidden_size" in values and "num_attention_heads" in values:
        values["head_dim"] = values["hidden_size"] // values["num_attention_heads"]
    if tp > 1:
        if kind.no_shard:
            raise ExtractError(
                f"--tp {tp}: {arch.name} {kind.name} has no tensor-parallel shard: {kind.no_shard}; drop --tp"
            )
        for key in kind.shard:
            key = arch.config_renames.get(key, key)
            if key not in values:
                continue
            if not isinstance(values[key], int) or values[key] % tp:
                raise ExtractError(f"--tp {tp}: {key}={values.get(key)} is not divisible by {tp}")
            values[key] //= tp
        if not kind.shard:
            raise ExtractError(f"module kind {kind.name!r} has no tensor-parallel shard; drop --tp")
    config_class = _CLIP_CONFIG if arch.name == "clip" else arch.config_class
    if not hasattr(transformers, config_class):
        raise _lacks(config_class)
    try:
        config = getattr(transformers, config_class)(**values)
    except (TypeError, ValueError) as error:
        raise ExtractError(f"cannot build {config_class} from the given values: {error}") from None
    config._attn_implementation = arch.attention
    return config


def _lacks(name: str) -> ExtractError:
    """The installed transformers has no `name`: renamed or removed since the versions the suite was made with."""
    return ExtractError(
        f"transformers {installed_versions().get('transformers')} has no {name}; the problems "
        "shipped were extracted with the versions in requirements/lock.txt"
    )


def _modeling(arch: Architecture):
    require_transformers()
    try:
        return importlib.import_module(arch.modeling)
    except ImportError as error:
        raise ExtractError(f"this transformers install lacks {arch.modeling}: {error}") from None


def _layer_index(config) -> int:
    """A layer with full (global) attention: sliding-window layers need the model's masks."""
    layer_types = getattr(config, "layer_types", None) or []
    return layer_types.index("full_attention") if "full_attention" in layer_types else 0


def build_module(arch: Architecture, kind: Kind, config):
    """The wrapped module (float32, random weights) whose forward takes ``hidden_states``."""
    import torch

    modeling = _modeling(arch)
    layer_class = getattr(modeling, arch.layer_class, None)
    if layer_class is None:
        raise _lacks(f"{arch.modeling}.{arch.layer_class}")
    layer_idx = _layer_index(config)
    with torch.device("cpu"):
        layer = layer_class(config, layer_idx) if arch.layer_args == "config, layer_idx" else layer_class(config)
    module = layer
    for part in filter(None, kind.path.split(".")):
        if not hasattr(module, part):
            raise ExtractError(f"{arch.layer_class} has no {kind.path!r} (kind {kind.name}) in this transformers")
        module = getattr(module, part)
    if kind.call == "moe" and not any("expert" in n for n, _ in module.named_parameters()):
        raise ExtractError(f"{arch.layer_class}.{kind.path} is not a mixture-of-experts block for this config")
    if kind.call == "moe":
        route_in_float32(module)
    rotary = None
    if arch.decoder and kind.call in ("attention", "layer"):
        rotary_class = next(
            (
                getattr(modeling, n)
                for n in dir(modeling)
                if n.endswith("RotaryEmbedding") and n.startswith(arch.config_class[:-6])
            ),
            None,
        )
        if rotary_class is None:
            raise ExtractError(f"{arch.modeling} has no rotary embedding class")
        rotary = rotary_class(config)
    wrapper = Wrapped(module, kind.call, rotary=rotary, causal=arch.decoder, eager=arch.attention == "eager")
    wrapper.eval()
    return wrapper


def _init_parameters(module, generator) -> dict[str, float]:
    """Real-model-like random weights; returns the per-parameter centre of 1-D parameters (norm gains 1, biases 0)."""
    import torch

    centres = {}
    with torch.no_grad():
        for name, parameter in module.named_parameters():
            if parameter.dim() >= 2:
                fan_in = parameter.shape[-1]  # [out, in] or stacked experts [E, out, in]
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * fan_in**-0.5)
            else:
                values = parameter.detach()
                constant = (
                    bool(torch.isfinite(values).all())
                    and values.numel() > 1
                    and float(values.min()) == float(values.max())
                )
                centre = float(values[0]) if constant else 0.0
                centres[name] = centre
                parameter.copy_(centre + 0.1 * torch.randn(parameter.shape, generator=generator))
    return centres


def _base():
    import torch

    return torch.nn.Module


class Wrapped(_base()):
    """One transformers module behind a forward that takes only ``hidden_states``."""

    def __init__(self, module, call: str, *, rotary=None, causal: bool = True, eager: bool = False):
        super().__init__()
        self.module = module
        self.call = call
        self.rotary = rotary
        self.causal = causal
        self.eager = eager
        accepted = inspect.signature(module.forward).parameters
        self._takes_mask = "attention_mask" in accepted

    def forward(self, hidden_states):
        import torch

        if self.call == "moe":
            out = self.module(hidden_states[None])
            return _first(out)[0]
        kwargs: dict[str, Any] = {}
        if self.call in ("attention", "layer") and self.rotary is not None:
            seq_len = hidden_states.shape[1]
            positions = torch.arange(seq_len, device=hidden_states.device)[None]
            kwargs["position_embeddings"] = self.rotary(hidden_states, positions)
            if self.call == "layer":
                kwargs["position_ids"] = positions
        if self._takes_mask:
            kwargs["attention_mask"] = None
            if self.causal and self.eager and hidden_states.dim() == 3:
                seq_len = hidden_states.shape[1]
                mask = torch.full(
                    (seq_len, seq_len),
                    torch.finfo(hidden_states.dtype).min,
                    dtype=hidden_states.dtype,
                    device=hidden_states.device,
                )
                kwargs["attention_mask"] = mask.triu(1)[None, None]
        return _first(self.module(hidden_states, **kwargs))


def route_in_float32(block) -> None:
    """Router logits, softmax and top-k in float32, as deployed MoE kernels compute them.

    transformers computes the logits in the weights' dtype: in bfloat16 about 5% of tokens tie at the
    top-k cut (Qwen3-30B-A3B, 128 experts, top 8), so the expert order -- not the model -- decides their
    experts, and a kernel that orders experts differently fails the reference. The weights stay in the
    model's dtype; only the router's arithmetic is float32; the routing weights it hands the experts are
    cast back to the activation's dtype where transformers does so (Qwen3-MoE, not Mixtral).
    """
    import types

    import torch

    gate = getattr(block, "gate", None)
    if gate is None or not hasattr(gate, "top_k") or not hasattr(gate, "weight"):
        raise ExtractError(f"{type(block).__name__} has no top-k router 'gate' this version of extract knows")

    import inspect

    cast_back = ".to(router_logits.dtype)" in inspect.getsource(type(gate).forward)

    def forward(self, hidden_states):
        hidden_states = hidden_states.reshape(-1, self.weight.shape[-1])
        logits = torch.nn.functional.linear(hidden_states.float(), self.weight.float())
        probabilities = torch.softmax(logits, dim=-1)
        top_values, top_indices = torch.topk(probabilities, self.top_k, dim=-1)
        if getattr(self, "norm_topk_prob", True):
            top_values = top_values / top_values.sum(dim=-1, keepdim=True)
        return logits, top_values.to(hidden_states.dtype) if cast_back else top_values, top_indices

    gate.forward = types.MethodType(forward, gate)


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def initialise(module, seed: int = 0) -> dict[str, float]:
    import torch

    return _init_parameters(module, torch.Generator().manual_seed(seed))
