"""L2 families: the RoPE + GQA self-attention block, the GQA attention backward and the VAE ResNet block, forward
and backward (templates under ``templates/l2/``); and L2's shorthand (`draft`), which `llm_breadth` and
`training` use too.

The shorthand gives inputs as (shape, dtype, std[, mean]) or (shape, dtype, "raw expression"): the
definition's inputs come from it, and so does the ``make_inputs`` put in the template's ``__MAKE_INPUTS__`` line,
with weights scaled as initialised (std = fan_in ** -0.5) so activations keep unit scale through the block.
References keep their working precision generic (float32, or float64 for float64 inputs), so the evaluator's
float64 golden run is a real float64 computation.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem (``draft(gpu=...)``),
``workload.cpu.jsonl`` the recipe's 8 small ones, each well under a second on a 2-core CPU. Attention shapes keep
the float64 golden run's score matrix under SCORE_BYTES_LIMIT. The set's other problems are hand-written folders.
"""

from __future__ import annotations

from typing import Any

from solbench.suite.draft import ModelRef, ProblemDraft
from suite_recipes.builder import problem, slug
from suite_recipes.models import model
from suite_recipes.shapes import grid
from suite_recipes.template import render

# --- models (values copied from solbench/suite/data/model-configs.json) ------------------------------------------

QWEN3_8B = model(
    "Qwen3-8B",
    "Qwen/Qwen3-8B",
    "language",
    {
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "hidden_act": "silu",
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000,
    },
)
QWEN3_06B = model(
    "Qwen3-0.6B",
    "Qwen/Qwen3-0.6B",
    "language",
    {
        "hidden_size": 1024,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000,
    },
)
MISTRAL_7B = model(
    "Mistral-7B-v0.3",
    "mistralai/Mistral-7B-v0.3",
    "language",
    {
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "hidden_act": "silu",
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "derived.head_dim": 128,
        "rms_norm_eps": 1e-05,
        "rope_theta": 1000000.0,
    },
)
LLAMA_32_1B = model(
    "Llama-3.2-1B",
    "meta-llama/Llama-3.2-1B",
    "language",
    {
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "hidden_act": "silu",
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 64,
    },
)
QWEN25_7B = model(
    "Qwen2.5-7B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct",
    "language",
    {
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "derived.head_dim": 128,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
    },
)


SDXL_VAE = model(
    "SDXL VAE (AutoencoderKL)",
    "stabilityai/stable-diffusion-xl-base-1.0",
    "diffusion",
    {"ch": 128, "ch_mult": [1, 2, 4, 4]},
)
FLUX_AE = model(
    "FLUX.1 autoencoder (ae)", "black-forest-labs/FLUX.1-dev", "diffusion", {"ch": 128, "ch_mult": [1, 2, 4, 4]}
)


# --- building blocks ------------------------------------------------------------------------------------

AxisSpec = int | None | str | tuple
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


_TORCH_DTYPE = {
    "bfloat16": "torch.bfloat16",
    "float32": "torch.float32",
    "float16": "torch.float16",
    "int64": "torch.int64",
    "int32": "torch.int32",
    "bool": "torch.bool",
}


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


Tier = list[dict[str, int]] | None


def shorthand(
    axes: dict[str, AxisSpec],
    inputs: dict[str, InputSpec],
    outputs: dict[str, tuple],
    template: str,
    values: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The definition fields (`suite_recipes.builder.problem`'s axes, inputs, outputs, reference and input generator)
    of a recipe written in L2's shorthand: axes as in `_axes`, inputs as (shape, dtype, std[, mean]) or (shape,
    dtype, "raw expression"), outputs as (shape, dtype), and the reference template (``templates/<template>``),
    whose ``__MAKE_INPUTS__`` line becomes the ``make_inputs`` generated from `inputs` and whose other placeholders
    take `values`."""
    return {
        "axes": _axes(axes),
        "inputs": {k: {"shape": (list(v[0]) if v[0] is not None else None), "dtype": v[1]} for k, v in inputs.items()},
        "outputs": {k: {"shape": list(v[0]), "dtype": v[1]} for k, v in outputs.items()},
        "reference": render(template, MAKE_INPUTS=_make_inputs(inputs), **(values or {})),
        "custom_inputs_entrypoint": "make_inputs",
    }


def draft(
    m: ModelRef,
    name: str,
    op_type: str,
    description: str,
    axes: dict[str, AxisSpec],
    inputs: dict[str, InputSpec],
    outputs: dict[str, tuple],
    template: str,
    workloads: list[dict[str, int]],
    *,
    backward: bool = False,
    scalars: dict | None = None,
    values: dict | None = None,
    gpu: Tier = None,
) -> ProblemDraft:
    """`suite_recipes.builder.problem` for an L2 recipe written in `shorthand`. With `gpu`, `gpu` becomes
    workload.jsonl and `workloads` the CPU tier (docs/tiers.md); a tier may repeat a size of the other (validate
    compares workloads within a tier)."""
    return problem(
        "L2",
        m,
        name,
        op_type,
        description,
        workloads=workloads,
        gpu=gpu,
        backward=backward,
        scalars=scalars,
        **shorthand(axes, inputs, outputs, template, values),
    )


def _tok(values, axis="num_tokens"):
    return [{axis: v} for v in values]


# --- the GPU tier (docs/tiers.md): upstream's scale --------------------------------------------------------


SCORE_BYTES_LIMIT = 16 * 10**9
"""Attention workloads keep batch x heads x queries x keys x 8 bytes under this: the evaluator's float64 golden run
takes the math path of scaled_dot_product_attention, which holds the whole score matrix (and a softmax copy)."""

PREFILL_SHAPES = (
    (1, 333),
    (3, 777),
    (1, 1024),
    (2, 1024),
    (1, 2048),
    (4, 1024),
    (1, 3000),
    (2, 2048),
    (1, 4096),
    (8, 1024),
    (4, 2048),
    (2, 4096),
    (1, 6144),
    (1, 8192),
    (16, 1024),
    (8, 2048),
    (4, 4096),
    (2, 8192),
    (1, 16384),
    (32, 1024),
    (16, 2048),
    (8, 4096),
    (64, 1024),
    (32, 2048),
    (96, 1024),
    (128, 1024),
)
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
    fits = sorted(
        ((b, s) for b, s in PREFILL_SHAPES if score_bytes(b, heads, s, s) <= limit), key=lambda p: p[0] * p[1]
    )
    return [{"batch_size": b, "seq_len": s} for b, s in spread(fits, count)]


def per_image(tokens_per_image: dict[int, tuple], axis: str = "num_tokens") -> list[dict[str, int]]:
    """Token counts of whole images (or clips): {tokens per image: image counts}, e.g. ViT-B/16's 197 and 577."""
    return [{axis: tokens * n} for tokens, counts in tokens_per_image.items() for n in counts]


def batches(shapes: dict[tuple, tuple], names: tuple) -> list[dict[str, int]]:
    """{(per-item axis values): batch sizes} as workloads with ``batch_size`` first, then `names`."""
    return [{"batch_size": b, **dict(zip(names, shape))} for shape, sizes in shapes.items() for b in sizes]


# --- attention blocks -----------------------------------------------------------------------------------


def attention_block(
    m: ModelRef, tp: int, workloads, *, head_dim_key="head_dim", bias=False, qk_norm=False, gpu: Tier = None
) -> ProblemDraft:
    hidden, heads, kv_heads = m.config["hidden_size"], m.config["num_attention_heads"], m.config["num_key_value_heads"]
    d, theta = m.config[head_dim_key], m.config["rope_theta"]
    hq, hkv = heads // tp, kv_heads // tp
    args = ["hidden_states", "q_proj", "k_proj", "v_proj", "o_proj"]
    inputs = {
        "hidden_states": (["batch_size", "seq_len", "hidden_size"], "bfloat16", 1.0),
        "q_proj": (["q_dim", "hidden_size"], "bfloat16", hidden**-0.5),
        "k_proj": (["kv_dim", "hidden_size"], "bfloat16", hidden**-0.5),
        "v_proj": (["kv_dim", "hidden_size"], "bfloat16", hidden**-0.5),
        "o_proj": (["hidden_size", "q_dim"], "bfloat16", (hq * d) ** -0.5),
    }
    if bias:
        args += ["q_bias", "k_bias", "v_bias"]
        inputs.update(
            {
                "q_bias": (["q_dim"], "bfloat16", 0.1),
                "k_bias": (["kv_dim"], "bfloat16", 0.1),
                "v_bias": (["kv_dim"], "bfloat16", 0.1),
            }
        )
    qknorm = ""
    if qk_norm:
        args += ["q_norm", "k_norm"]
        inputs.update({"q_norm": (["head_dim"], "bfloat16", 0.1, 1.0), "k_norm": (["head_dim"], "bfloat16", 0.1, 1.0)})
        eps = m.config.get("rms_norm_eps", 1e-6)
        qknorm = f"    q = _rmsnorm(q, q_norm, {eps!r})\n    k = _rmsnorm(k, k_norm, {eps!r})\n"
    values = {"EXTRA_ARGS": "".join(", " + a for a in args[5:]), "QKNORM": qknorm, "D": d, "THETA": float(theta)}
    for key, name in (("QB", "q_bias"), ("KB", "k_bias"), ("VB", "v_bias")):
        values[key] = f", {name}" if bias else ""
    extra = []
    if bias:
        extra.append("q/k/v biases (attention_bias)")
    if qk_norm:
        extra.append(f"per-head RMSNorm on q and k before RoPE (rms_norm_eps {m.config['rms_norm_eps']})")
    tp_text = (
        f" Tensor-parallel shard TP={tp}: {hq} of {heads} query heads and {hkv} of {kv_heads} KV heads per rank."
        if tp > 1
        else ""
    )
    name = f"{slug(m)}_{'qknorm_' if qk_norm else ''}attention_block_hq{hq}_hkv{hkv}_d{d}"
    return draft(
        m,
        name,
        "attention_block",
        f"{m.name} self-attention block for prefill: q/k/v projections, RoPE (rope_theta {theta}, rotate-half "
        f"layout, positions 0..seq_len-1), causal GQA scaled-dot-product attention with num_attention_heads "
        f"{heads}, num_key_value_heads {kv_heads}, head_dim {d}, then o_proj"
        f"{'; ' + ', '.join(extra) if extra else ''}.{tp_text}",
        {
            "batch_size": (None, "sequences in the batch"),
            "seq_len": (None, "prompt length"),
            "hidden_size": (hidden, "hidden_size"),
            "head_dim": (d, head_dim_key),
            "q_dim": (hq * d, f"num_attention_heads/TP x head_dim = {hq} x {d}"),
            "kv_dim": (hkv * d, f"num_key_value_heads/TP x head_dim = {hkv} x {d}"),
        },
        inputs,
        {"output": (["batch_size", "seq_len", "hidden_size"], "bfloat16")},
        "l2/attention_block.py",
        workloads,
        values=values,
        gpu=gpu,
    )


def attention_backward(m: ModelRef, workloads, *, head_dim_key="head_dim", gpu: Tier = None) -> ProblemDraft:
    heads, kv_heads, d = m.config["num_attention_heads"], m.config["num_key_value_heads"], m.config[head_dim_key]
    return draft(
        m,
        f"{slug(m)}_gqa_attention_backward_h{heads}_kv{kv_heads}_d{d}",
        "attention_backward",
        f"Backward of {m.name}'s causal grouped-query attention core softmax(q k^T / sqrt({d})) v "
        f"(num_attention_heads {heads}, num_key_value_heads {kv_heads}, head_dim {d}) as in training: given "
        "q, k, v and grad_output, returns dq, dk, dv (dk/dv summed over the query heads sharing a KV head).",
        {
            "batch_size": (None, "sequences in the micro-batch"),
            "seq_len": (None, "sequence length"),
            "num_heads": (heads, "num_attention_heads"),
            "num_kv_heads": (kv_heads, "num_key_value_heads"),
            "head_dim": (d, head_dim_key),
        },
        {
            "query": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
            "key": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
            "value": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
            "grad_output": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16", 1.0),
        },
        {
            "grad_query": (["batch_size", "num_heads", "seq_len", "head_dim"], "bfloat16"),
            "grad_key": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16"),
            "grad_value": (["batch_size", "num_kv_heads", "seq_len", "head_dim"], "bfloat16"),
        },
        "l2/attention_backward.py",
        workloads,
        backward=True,
        gpu=gpu,
    )


# --- convolutional blocks ---------------------------------------------------------------------------------


def vae_resnet_block(
    m: ModelRef, c_in: int, c_out: int, where: str, workloads, *, backward=False, gpu: Tier = None
) -> ProblemDraft:
    args = [
        "x",
        "norm1_weight",
        "norm1_bias",
        "conv1_weight",
        "conv1_bias",
        "norm2_weight",
        "norm2_bias",
        "conv2_weight",
        "conv2_bias",
    ]
    f32 = "float32"
    inputs = {
        "x": (["batch_size", "in_channels", "height", "width"], f32, 1.0),
        "norm1_weight": (["in_channels"], f32, 0.1, 1.0),
        "norm1_bias": (["in_channels"], f32, 0.1),
        "conv1_weight": (["out_channels", "in_channels", "three", "three"], f32, (9 * c_in) ** -0.5),
        "conv1_bias": (["out_channels"], f32, 0.1),
        "norm2_weight": (["out_channels"], f32, 0.1, 1.0),
        "norm2_bias": (["out_channels"], f32, 0.1),
        "conv2_weight": (["out_channels", "out_channels", "three", "three"], f32, (9 * c_out) ** -0.5),
        "conv2_bias": (["out_channels"], f32, 0.1),
    }
    skip = "x"
    if c_in != c_out:
        args += ["nin_shortcut_weight", "nin_shortcut_bias"]
        inputs["nin_shortcut_weight"] = (["out_channels", "in_channels", "one", "one"], f32, c_in**-0.5)
        inputs["nin_shortcut_bias"] = (["out_channels"], f32, 0.1)
        skip = "F.conv2d(x, nin_shortcut_weight, nin_shortcut_bias)"
    axes = {
        "batch_size": (None, "images"),
        "height": (None, "feature-map height"),
        "width": (None, "feature-map width"),
        "in_channels": (c_in, where),
        "out_channels": (c_out, where),
        "three": (3, "3x3 kernel"),
    }
    if c_in != c_out:
        axes["one"] = (1, "1x1 shortcut")
    what = (
        f"{m.name} ResnetBlock ({where}): GroupNorm(32, eps 1e-6) + SiLU + conv3x3, GroupNorm + SiLU + conv3x3, "
        f"plus the {'1x1 nin_shortcut' if c_in != c_out else 'identity'} skip; ch {m.config['ch']}, ch_mult "
        f"{m.config['ch_mult']}. fp32, as VAEs are usually run."
    )
    if backward:
        inputs["grad_output"] = (["batch_size", "out_channels", "height", "width"], f32, 1.0)
        outs = {f"grad_{n}": (spec[0], f32) for n, spec in inputs.items() if n != "grad_output"}
        del inputs["conv2_bias"]
        return draft(
            m,
            f"{slug(m)}_resnet_block_backward_c{c_in}",
            "conv_block_backward",
            "Backward of the " + what + " Returns the gradients of the input and all parameters given "
            "grad_output (VAE fine-tuning).",
            axes,
            inputs,
            outs,
            "l2/vae_resnet_block_backward.py",
            workloads,
            backward=True,
            gpu=gpu,
        )
    return draft(
        m,
        f"{slug(m)}_resnet_block_c{c_in}_c{c_out}",
        "conv_block",
        what,
        axes,
        inputs,
        {"output": (["batch_size", "out_channels", "height", "width"], f32)},
        "l2/vae_resnet_block.py",
        workloads,
        values={"EXTRA_ARGS": "".join(", " + a for a in args[9:]), "SKIP": skip},
        gpu=gpu,
    )


# --- the set ------------------------------------------------------------------------------------------------


def drafts() -> list[ProblemDraft]:
    """Each problem's first workload list is its CPU tier (today's small sizes), ``gpu=`` its GPU tier."""
    hw = ("height", "width")
    return [
        # attention
        attention_block(
            QWEN25_7B,
            1,
            grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 33, 64, 128, 100, 255, 200, 384)),
            head_dim_key="derived.head_dim",
            bias=True,
            gpu=prefill(28),
        ),
        attention_block(
            MISTRAL_7B,
            4,
            grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1000)),
            head_dim_key="derived.head_dim",
            gpu=prefill(8),
        ),
        attention_block(
            QWEN3_06B,
            1,
            grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1024)),
            qk_norm=True,
            gpu=prefill(16),
        ),
        attention_block(
            QWEN3_8B,
            4,
            grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1000)),
            qk_norm=True,
            gpu=prefill(8),
        ),
        attention_backward(
            LLAMA_32_1B,
            grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 1024)),
            gpu=prefill(32),
        ),
        attention_backward(
            QWEN3_06B,
            grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 1), seq_len=(16, 64, 100, 256, 128, 512, 384, 768)),
            gpu=prefill(16),
        ),
        # VAE
        vae_resnet_block(
            SDXL_VAE,
            512,
            512,
            "decoder mid / up block, ch x ch_mult[-1] = 512 channels",
            grid(
                batch_size=(1, 1, 1, 2, 1, 1, 1, 2),
                height=(8, 16, 24, 16, 32, 40, 48, 32),
                width=(8, 16, 24, 16, 32, 40, 48, 32),
            ),
            gpu=batches(
                {
                    (64, 64): (1, 4, 16),
                    (96, 96): (2, 8),
                    (128, 128): (1, 2, 3, 4, 6, 8),
                    (128, 96): (1, 4),
                    (96, 160): (2,),
                    (256, 256): (1, 2),
                },
                hw,
            ),
        ),
        vae_resnet_block(
            FLUX_AE,
            512,
            256,
            "decoder up block 512 -> ch x ch_mult[1] = 256 channels",
            grid(
                batch_size=(1, 1, 1, 2, 1, 1, 1, 2),
                height=(16, 32, 48, 32, 64, 40, 64, 48),
                width=(16, 32, 48, 32, 64, 72, 96, 48),
            ),
            gpu=batches(
                {
                    (128, 128): (1, 2, 4, 8),
                    (256, 256): (1, 2, 4),
                    (256, 384): (1,),
                    (384, 384): (1, 2),
                    (512, 384): (1, 2),
                    (512, 512): (1, 2, 4),
                    (768, 768): (1,),
                },
                hw,
            ),
        ),
        vae_resnet_block(
            SDXL_VAE,
            128,
            128,
            "encoder/decoder full-resolution block, ch = 128 channels",
            grid(
                batch_size=(1, 1, 1, 2, 1, 1, 1, 2),
                height=(16, 32, 48, 32, 64, 80, 96, 64),
                width=(16, 32, 48, 32, 64, 80, 96, 64),
            ),
            backward=True,
            gpu=batches(
                {
                    (128, 128): (1, 4, 16),
                    (256, 256): (1, 2, 4, 8),
                    (384, 384): (1, 2),
                    (512, 512): (1, 2, 4),
                    (768, 768): (1,),
                    (1024, 768): (1,),
                    (1024, 1024): (1, 2),
                },
                hw,
            ),
        ),
    ]
