"""L2: fused blocks as they occur in real models (MLPs, attention blocks, DiT modulation, conv blocks,
MoE, MLA, recommender interaction, ...), forward and backward.

Every family is a function of a `ModelRef`; the const axes carry the model's published dimensions
(a tensor- or expert-parallel shard where a full layer would not fit the CPU budget; the description
says so). Inputs come from a generated ``make_inputs`` so weights are scaled as initialised
(std = fan_in ** -0.5): activations keep unit scale through the block and softmaxes stay soft.
References keep their working precision generic (float32, or float64 for float64 inputs), so the
evaluator's float64 golden run is a real float64 computation.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem (``draft(gpu=...)``):
training and prefill shapes of 1k-64k tokens with a few small odd ones, decode batches, native image, clip and
latent sizes (ViT-B/16 197 and 577 tokens per image, CLIP-L/14 257 and 577, DINOv2 257 and 1370, Whisper 1,500
frames per 30 s clip, SAM's 64 x 64 grid, VAE and DiT latents of 512-1024 px images, Wan's 480p latents), with
batches up to at least 400 MB of inputs and outputs and at most a few GB. ``workload.cpu.jsonl`` keeps the
recipe's 8 small workloads, each well under a second on a 2-core CPU. Attention shapes keep the float64 golden
run's score matrix under SCORE_BYTES_LIMIT (except Wan's native clips, which get a float32 golden result).
"""

from __future__ import annotations

import re
from typing import Any, Optional, Union

from suite_recipes.builder import problem, slug
from suite_recipes.shapes import grid
from suite_recipes.models import model
from suite_recipes.snippets import ACC
from solbench.suite.draft import ModelRef, ProblemDraft

# --- models (values copied from solbench/suite/data/model-configs.json) ------------------------------------------

QWEN3_8B = model("Qwen3-8B", "Qwen/Qwen3-8B", "language",
                 {"hidden_size": 4096, "intermediate_size": 12288, "hidden_act": "silu",
                  "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                  "rms_norm_eps": 1e-06, "rope_theta": 1000000})
QWEN3_06B = model("Qwen3-0.6B", "Qwen/Qwen3-0.6B", "language",
                  {"hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
                   "rms_norm_eps": 1e-06, "rope_theta": 1000000})
MISTRAL_7B = model("Mistral-7B-v0.3", "mistralai/Mistral-7B-v0.3", "language",
                   {"hidden_size": 4096, "intermediate_size": 14336, "hidden_act": "silu",
                    "num_attention_heads": 32, "num_key_value_heads": 8, "derived.head_dim": 128,
                    "rms_norm_eps": 1e-05, "rope_theta": 1000000.0})
LLAMA_32_1B = model("Llama-3.2-1B", "meta-llama/Llama-3.2-1B", "language",
                    {"hidden_size": 2048, "intermediate_size": 8192, "hidden_act": "silu",
                     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64})
QWEN25_7B = model("Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "language",
                  {"hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
                   "derived.head_dim": 128, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0})


SDXL_VAE = model("SDXL VAE (AutoencoderKL)", "stabilityai/stable-diffusion-xl-base-1.0", "diffusion",
                 {"ch": 128, "ch_mult": [1, 2, 4, 4]})
FLUX_AE = model("FLUX.1 autoencoder (ae)", "black-forest-labs/FLUX.1-dev", "diffusion",
                {"ch": 128, "ch_mult": [1, 2, 4, 4]})


# --- building blocks ------------------------------------------------------------------------------------

AxisSpec = Union[int, None, str, tuple]
InputSpec = tuple


def _axes(spec: dict[str, AxisSpec]) -> dict[str, dict[str, Any]]:
    """int: const; None: var; str: expr; (value, description) for const/var/expr with a description."""
    axes = {}
    for name, value in spec.items():
        description = None
        if isinstance(value, tuple):
            value, description = value
        if value is None:
            axis: dict[str, Any] = {"type": "var"}
        elif isinstance(value, str):
            axis = {"type": "expr", "expression": value}
        else:
            axis = {"type": "const", "value": int(value)}
        if description:
            axis["description"] = description
        axes[name] = axis
    return axes


_TORCH_DTYPE = {"bfloat16": "torch.bfloat16", "float32": "torch.float32", "float16": "torch.float16",
                "int64": "torch.int64", "int32": "torch.int32", "bool": "torch.bool"}


def _make_inputs(inputs: dict[str, InputSpec]) -> str:
    """Source of make_inputs: each input is randn * std (+ mean), or a raw expression.

    Spec: (shape, dtype, std) | (shape, dtype, std, mean) | (shape, dtype, "raw python expression")
    The raw expression sees ``a`` (axes), ``shape``, ``device``, ``dt`` (torch dtype) and ``out``.
    """
    lines = ["def make_inputs(axes_and_scalars, device):", "    a = axes_and_scalars", "    out = {}"]
    for name, spec in inputs.items():
        shape, dtype = spec[0], spec[1]
        if shape is None:
            continue
        dims = ", ".join(f"a[{d!r}]" for d in shape) + ("," if len(shape) == 1 else "")
        lines.append(f"    shape = ({dims})")
        lines.append(f"    dt = {_TORCH_DTYPE[dtype]}")
        gen = spec[2]
        if isinstance(gen, str):
            lines.append(f"    out[{name!r}] = ({gen}).to(dt)")
        else:
            mean = spec[3] if len(spec) > 3 else 0.0
            text = f"torch.randn(shape, device=device) * {gen!r}"
            if mean:
                text += f" + {mean!r}"
            lines.append(f"    out[{name!r}] = ({text}).to(dt)")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


Tier = Optional[list[dict[str, int]]]

_HEADER = "import math\n\nimport torch\nimport torch.nn.functional as F\n\n\n"


def shorthand(name: str, axes: dict[str, AxisSpec], inputs: dict[str, InputSpec], outputs: dict[str, tuple],
              body: str, subs: Optional[dict] = None) -> dict[str, Any]:
    """The definition fields (`catalog.builder.problem`'s axes, inputs, outputs, reference and input generator) of
    a recipe written in L2's shorthand: axes as in `_axes`, inputs as (shape, dtype, std[, mean]) or (shape,
    dtype, "raw expression") from which ``make_inputs`` is generated, outputs as (shape, dtype), and the body of
    the reference with ``@KEY@`` placeholders filled from `subs`."""
    for key, value in (subs or {}).items():
        body = body.replace(f"@{key}@", repr(value))
    if re.search(r"@[A-Z_]+@", body):
        raise ValueError(f"{name}: unsubstituted placeholder in reference")
    return {"axes": _axes(axes),
            "inputs": {k: {"shape": (list(v[0]) if v[0] is not None else None), "dtype": v[1]}
                       for k, v in inputs.items()},
            "outputs": {k: {"shape": list(v[0]), "dtype": v[1]} for k, v in outputs.items()},
            "reference": _HEADER + _make_inputs(inputs) + "\n\n" + body, "custom_inputs_entrypoint": "make_inputs"}


def draft(m: ModelRef, name: str, op_type: str, description: str, axes: dict[str, AxisSpec],
          inputs: dict[str, InputSpec], outputs: dict[str, tuple], body: str, workloads: list[dict[str, int]],
          *, backward: bool = False, scalars: Optional[dict] = None, subs: Optional[dict] = None,
          gpu: Tier = None) -> ProblemDraft:
    """`catalog.builder.problem` for an L2 recipe written in `shorthand` (kept as a name because about 140
    recipes across nine modules call it). With `gpu`, `gpu` becomes workload.jsonl and `workloads` the CPU
    tier (docs/tiers.md); a tier may repeat a size of the other (validate compares workloads within a tier)."""
    return problem("L2", m, name, op_type, description, workloads=workloads, gpu=gpu, backward=backward,
                   scalars=scalars, **shorthand(name, axes, inputs, outputs, body, subs))


def _tok(values, axis="num_tokens"):
    return [{axis: v} for v in values]


# --- the GPU tier (docs/tiers.md): upstream's scale --------------------------------------------------------
# Local sweeps, kept apart so they can move to a shared catalog/sweeps.py when the sets share one.


SCORE_BYTES_LIMIT = 16 * 10**9
"""Attention workloads keep batch x heads x queries x keys x 8 bytes under this: the evaluator's float64 golden run
takes the math path of scaled_dot_product_attention, which holds the whole score matrix (and a softmax copy)."""

PREFILL_SHAPES = ((1, 333), (3, 777), (1, 1024), (2, 1024), (1, 2048), (4, 1024), (1, 3000), (2, 2048), (1, 4096),
                  (8, 1024), (4, 2048), (2, 4096), (1, 6144), (1, 8192), (16, 1024), (8, 2048), (4, 4096),
                  (2, 8192), (1, 16384), (32, 1024), (16, 2048), (8, 4096), (64, 1024), (32, 2048), (96, 1024),
                  (128, 1024))
"""(batch, prompt length) candidates for prefill and training attention, by total tokens: 333 to 128k."""


def score_bytes(batch: int, heads: int, queries: int, keys: int) -> int:
    """Bytes of the float64 attention scores the golden run materialises."""
    return batch * heads * queries * keys * 8


def spread(values: list, count: int = 16) -> list:
    """`count` of `values` (ordered by size) evenly spread, the first and the last always among them."""
    if len(values) < count:
        raise ValueError(f"{len(values)} candidates for {count} workloads")
    return [values[round(i * (len(values) - 1) / (count - 1))] for i in range(count)]


def prefill(heads: int, *, limit: int = SCORE_BYTES_LIMIT, count: int = 16) -> list[dict[str, int]]:
    """`count` (batch_size, seq_len) workloads from PREFILL_SHAPES whose float64 scores fit `limit` with `heads`
    query heads: the longest prompts a golden run holds, and batches of shorter ones up to 128k tokens."""
    fits = sorted(((b, s) for b, s in PREFILL_SHAPES if score_bytes(b, heads, s, s) <= limit), key=lambda p: p[0] * p[1])
    return [{"batch_size": b, "seq_len": s} for b, s in spread(fits, count)]


def per_image(tokens_per_image: dict[int, tuple], axis: str = "num_tokens") -> list[dict[str, int]]:
    """Token counts of whole images (or clips): {tokens per image: image counts}, e.g. ViT-B/16's 197 and 577."""
    return [{axis: tokens * n} for tokens, counts in tokens_per_image.items() for n in counts]


def batches(shapes: dict[tuple, tuple], names: tuple) -> list[dict[str, int]]:
    """{(per-item axis values): batch sizes} as workloads with ``batch_size`` first, then `names`."""
    return [{"batch_size": b, **dict(zip(names, shape))} for shape, sizes in shapes.items() for b in sizes]


_HELPERS = '''
''' + ACC + '''

def _rmsnorm(x, weight, eps):
    xf = x.to(_acc(x))
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rope_tables(seq_len, dim, theta, ref):
    """cos/sin [seq_len, dim] for positions 0..seq_len-1 (Hugging Face layout: halves repeated)."""
    acc = _acc(ref)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=ref.device, dtype=acc) / dim))
    freqs = torch.arange(seq_len, device=ref.device, dtype=acc)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(ref.dtype), emb.sin().to(ref.dtype)
'''


def body(text: str) -> str:
    return _HELPERS + "\n\n" + text


# --- MLP families ---------------------------------------------------------------------------------------


# --- residual add + RMSNorm -------------------------------------------------------------------------------


# --- attention blocks -----------------------------------------------------------------------------------

_SELF_ATTN = '''@torch.no_grad()
def run(@ARGS@):
    b, s, _ = hidden_states.shape
    q = F.linear(hidden_states, q_proj@QB@).view(b, s, -1, @D@)
    k = F.linear(hidden_states, k_proj@KB@).view(b, s, -1, @D@)
    v = F.linear(hidden_states, v_proj@VB@).view(b, s, -1, @D@)
@QKNORM@    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    cos, sin = _rope_tables(s, @D@, @THETA@, hidden_states)
    q = q * cos + _rotate_half(q) * sin
    k = k * cos + _rotate_half(k) * sin
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.linear(o.transpose(1, 2).reshape(b, s, -1), o_proj)
'''


def attention_block(m: ModelRef, tp: int, workloads, *, head_dim_key="head_dim", bias=False,
                    qk_norm=False, gpu: Tier = None) -> ProblemDraft:
    hidden, heads, kv_heads = m.config["hidden_size"], m.config["num_attention_heads"], m.config["num_key_value_heads"]
    d, theta = m.config[head_dim_key], m.config["rope_theta"]
    hq, hkv = heads // tp, kv_heads // tp
    args = ["hidden_states", "q_proj", "k_proj", "v_proj", "o_proj"]
    inputs = {"hidden_states": (["batch_size", "seq_len", "hidden_size"], "bfloat16", 1.0),
              "q_proj": (["q_dim", "hidden_size"], "bfloat16", hidden ** -0.5),
              "k_proj": (["kv_dim", "hidden_size"], "bfloat16", hidden ** -0.5),
              "v_proj": (["kv_dim", "hidden_size"], "bfloat16", hidden ** -0.5),
              "o_proj": (["hidden_size", "q_dim"], "bfloat16", (hq * d) ** -0.5)}
    if bias:
        args += ["q_bias", "k_bias", "v_bias"]
        inputs.update({"q_bias": (["q_dim"], "bfloat16", 0.1), "k_bias": (["kv_dim"], "bfloat16", 0.1),
                       "v_bias": (["kv_dim"], "bfloat16", 0.1)})
    qknorm = ""
    if qk_norm:
        args += ["q_norm", "k_norm"]
        inputs.update({"q_norm": (["head_dim"], "bfloat16", 0.1, 1.0), "k_norm": (["head_dim"], "bfloat16", 0.1, 1.0)})
        qknorm = ("    q = _rmsnorm(q, q_norm, @EPS@)\n    k = _rmsnorm(k, k_norm, @EPS@)\n")
    src = _SELF_ATTN.replace("@ARGS@", ", ".join(args)).replace("@QKNORM@", qknorm)
    for key, name in (("QB", "q_bias"), ("KB", "k_bias"), ("VB", "v_bias")):
        src = src.replace(f"@{key}@", f", {name}" if bias else "")
    extra = []
    if bias:
        extra.append("q/k/v biases (attention_bias)")
    if qk_norm:
        extra.append(f"per-head RMSNorm on q and k before RoPE (rms_norm_eps {m.config['rms_norm_eps']})")
    tp_text = f" Tensor-parallel shard TP={tp}: {hq} of {heads} query heads and {hkv} of {kv_heads} KV heads per rank." \
        if tp > 1 else ""
    name = f"{slug(m)}_{'qknorm_' if qk_norm else ''}attention_block_hq{hq}_hkv{hkv}_d{d}"
    return draft(
        m, name, "attention_block",
        f"{m.name} self-attention block for prefill: q/k/v projections, RoPE (rope_theta {theta}, rotate-half "
        f"layout, positions 0..seq_len-1), causal GQA scaled-dot-product attention with num_attention_heads "
        f"{heads}, num_key_value_heads {kv_heads}, head_dim {d}, then o_proj"
        f"{'; ' + ', '.join(extra) if extra else ''}.{tp_text}",
        {"batch_size": (None, "sequences in the batch"), "seq_len": (None, "prompt length"),
         "hidden_size": (hidden, "hidden_size"), "head_dim": (d, head_dim_key),
         "q_dim": (hq * d, f"num_attention_heads/TP x head_dim = {hq} x {d}"),
         "kv_dim": (hkv * d, f"num_key_value_heads/TP x head_dim = {hkv} x {d}")},
        inputs, {"output": (["batch_size", "seq_len", "hidden_size"], "bfloat16")},
        body(src), workloads, subs={"D": d, "THETA": float(theta), "EPS": m.config.get("rms_norm_eps", 1e-6)}, gpu=gpu)


_ATTN_BWD = '''def run(query, key, value, grad_output):
    with torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (query, key, value))
        group = q.shape[1] // k.shape[1]
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1),
                                           is_causal=True)
        return torch.autograd.grad(o, (q, k, v), grad_output)
'''


def attention_backward(m: ModelRef, workloads, *, head_dim_key="head_dim", gpu: Tier = None) -> ProblemDraft:
    heads, kv_heads, d = m.config["num_attention_heads"], m.config["num_key_value_heads"], m.config[head_dim_key]
    return draft(
        m, f"{slug(m)}_gqa_attention_backward_h{heads}_kv{kv_heads}_d{d}", "attention_backward",
        f"Backward of {m.name}'s causal grouped-query attention core softmax(q k^T / sqrt({d})) v "
        f"(num_attention_heads {heads}, num_key_value_heads {kv_heads}, head_dim {d}) as in training: given "
        "q, k, v and grad_output, returns dq, dk, dv (dk/dv summed over the query heads sharing a KV head).",
        {"batch_size": (None, "sequences in the micro-batch"), "seq_len": (None, "sequence length"),
         "num_heads": (heads, "num_attention_heads"), "num_kv_heads": (kv_heads, "num_key_value_heads"),
         "head_dim": (d, head_dim_key)},
        {"query": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
         "key": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
         "value": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
         "grad_output": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16", 1.0)},
        {"grad_query": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16"),
         "grad_key": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16"),
         "grad_value": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16")},
        _ATTN_BWD, workloads, backward=True, gpu=gpu)


# --- vision transformer pieces ----------------------------------------------------------------------------


# --- convolutional blocks ---------------------------------------------------------------------------------

_VAE_RESNET = '''@torch.no_grad()
def run(@ARGS@):
    h = F.silu(F.group_norm(x, 32, norm1_weight, norm1_bias, 1e-06))
    h = F.conv2d(h, conv1_weight, conv1_bias, padding=1)
    h = F.silu(F.group_norm(h, 32, norm2_weight, norm2_bias, 1e-06))
    h = F.conv2d(h, conv2_weight, conv2_bias, padding=1)
    return @SKIP@ + h
'''
_VAE_RESNET_BWD = '''def run(x, norm1_weight, norm1_bias, conv1_weight, conv1_bias, norm2_weight, norm2_bias, conv2_weight,
        grad_output):
    # conv2's bias enters no gradient but its own (the sum of grad_output), so it is not an input
    conv2_bias = torch.zeros(conv2_weight.shape[0], dtype=x.dtype, device=x.device)
    with torch.enable_grad():
        params = [t.detach().requires_grad_() for t in (x, norm1_weight, norm1_bias, conv1_weight, conv1_bias,
                                                         norm2_weight, norm2_bias, conv2_weight, conv2_bias)]
        xx, n1w, n1b, c1w, c1b, n2w, n2b, c2w, c2b = params
        h = F.conv2d(F.silu(F.group_norm(xx, 32, n1w, n1b, 1e-06)), c1w, c1b, padding=1)
        h = F.conv2d(F.silu(F.group_norm(h, 32, n2w, n2b, 1e-06)), c2w, c2b, padding=1)
        return torch.autograd.grad(xx + h, params, grad_output)
'''


def vae_resnet_block(m: ModelRef, c_in: int, c_out: int, where: str, workloads, *, backward=False,
                     gpu: Tier = None) -> ProblemDraft:
    args = ["x", "norm1_weight", "norm1_bias", "conv1_weight", "conv1_bias", "norm2_weight", "norm2_bias",
            "conv2_weight", "conv2_bias"]
    f32 = "float32"
    inputs = {"x": (["batch_size", "in_channels", "height", "width"], f32, 1.0),
              "norm1_weight": (["in_channels"], f32, 0.1, 1.0), "norm1_bias": (["in_channels"], f32, 0.1),
              "conv1_weight": (["out_channels", "in_channels", "three", "three"], f32, (9 * c_in) ** -0.5),
              "conv1_bias": (["out_channels"], f32, 0.1),
              "norm2_weight": (["out_channels"], f32, 0.1, 1.0), "norm2_bias": (["out_channels"], f32, 0.1),
              "conv2_weight": (["out_channels", "out_channels", "three", "three"], f32, (9 * c_out) ** -0.5),
              "conv2_bias": (["out_channels"], f32, 0.1)}
    skip = "x"
    if c_in != c_out:
        args += ["nin_shortcut_weight", "nin_shortcut_bias"]
        inputs["nin_shortcut_weight"] = (["out_channels", "in_channels", "one", "one"], f32, c_in ** -0.5)
        inputs["nin_shortcut_bias"] = (["out_channels"], f32, 0.1)
        skip = "F.conv2d(x, nin_shortcut_weight, nin_shortcut_bias)"
    axes = {"batch_size": (None, "images"), "height": (None, "feature-map height"),
            "width": (None, "feature-map width"), "in_channels": (c_in, where), "out_channels": (c_out, where),
            "three": (3, "3x3 kernel")}
    if c_in != c_out:
        axes["one"] = (1, "1x1 shortcut")
    what = (f"{m.name} ResnetBlock ({where}): GroupNorm(32, eps 1e-6) + SiLU + conv3x3, GroupNorm + SiLU + conv3x3, "
            f"plus the {'1x1 nin_shortcut' if c_in != c_out else 'identity'} skip; ch {m.config['ch']}, ch_mult "
            f"{m.config['ch_mult']}. fp32, as VAEs are usually run.")
    if backward:
        inputs["grad_output"] = (["batch_size", "out_channels", "height", "width"], f32, 1.0)
        outs = {f"grad_{n}": (spec[0], f32) for n, spec in inputs.items() if n != "grad_output"}
        del inputs["conv2_bias"]
        return draft(m, f"{slug(m)}_resnet_block_backward_c{c_in}", "conv_block_backward",
                     "Backward of the " + what + " Returns the gradients of the input and all parameters given "
                     "grad_output (VAE fine-tuning).", axes, inputs, outs, _VAE_RESNET_BWD, workloads, backward=True, gpu=gpu)
    src = _VAE_RESNET.replace("@ARGS@", ", ".join(args)).replace("@SKIP@", skip)
    return draft(m, f"{slug(m)}_resnet_block_c{c_in}_c{c_out}", "conv_block", what, axes, inputs,
                 {"output": (["batch_size", "out_channels", "height", "width"], f32)}, src, workloads, gpu=gpu)


# --- mixture of experts, MLA ------------------------------------------------------------------------------


# --- recommender --------------------------------------------------------------------------------------------


# --- video, multimodal --------------------------------------------------------------------------------------


# --- the set ------------------------------------------------------------------------------------------------


def drafts() -> list[ProblemDraft]:
    """Each problem's first workload list is its CPU tier (today's small sizes), ``gpu=`` its GPU tier."""
    hw = ("height", "width")
    return [
        # attention
        attention_block(QWEN25_7B, 1, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 33, 64, 128, 100, 255, 200, 384)),
                        head_dim_key="derived.head_dim", bias=True, gpu=prefill(28)),
        attention_block(MISTRAL_7B, 4, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1000)),
                        head_dim_key="derived.head_dim", gpu=prefill(8)),
        attention_block(QWEN3_06B, 1, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1024)),
                        qk_norm=True, gpu=prefill(16)),
        attention_block(QWEN3_8B, 4, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1000)),
                        qk_norm=True, gpu=prefill(8)),
        attention_backward(LLAMA_32_1B, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1024)),
                           gpu=prefill(32)),
        attention_backward(QWEN3_06B, grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 768)),
                           gpu=prefill(16)),
        # VAE
        vae_resnet_block(SDXL_VAE, 512, 512, "decoder mid / up block, ch x ch_mult[-1] = 512 channels",
                         grid(batch_size=(1, 1, 1, 2, 1, 1, 1, 2), height=(8, 16, 24, 16, 32, 40, 48, 32),
                              width=(8, 16, 24, 16, 32, 40, 48, 32)),
                         gpu=batches({(64, 64): (1, 4, 16), (96, 96): (2, 8), (128, 128): (1, 2, 3, 4, 6, 8),
                                      (128, 96): (1, 4), (96, 160): (2,), (256, 256): (1, 2)}, hw)),
        vae_resnet_block(FLUX_AE, 512, 256, "decoder up block 512 -> ch x ch_mult[1] = 256 channels",
                         grid(batch_size=(1, 1, 1, 2, 1, 1, 1, 2), height=(16, 32, 48, 32, 64, 40, 64, 48),
                              width=(16, 32, 48, 32, 64, 72, 96, 48)),
                         gpu=batches({(128, 128): (1, 2, 4, 8), (256, 256): (1, 2, 4), (256, 384): (1,),
                                      (384, 384): (1, 2), (512, 384): (1, 2), (512, 512): (1, 2, 4), (768, 768): (1,)}, hw)),
        vae_resnet_block(SDXL_VAE, 128, 128, "encoder/decoder full-resolution block, ch = 128 channels",
                         grid(batch_size=(1, 1, 1, 2, 1, 1, 1, 2), height=(16, 32, 48, 32, 64, 80, 96, 64),
                              width=(16, 32, 48, 32, 64, 80, 96, 64)), backward=True,
                         gpu=batches({(128, 128): (1, 4, 16), (256, 256): (1, 2, 4, 8), (384, 384): (1, 2),
                                      (512, 512): (1, 2, 4), (768, 768): (1,), (1024, 768): (1,), (1024, 1024): (1, 2)}, hw)),
    ]
