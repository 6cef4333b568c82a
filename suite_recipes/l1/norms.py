"""Normalisation layers: RMSNorm (Llama, Gemma's 1 + weight) and LayerNorm (ViT, DINOv2, Whisper).

Their references (templates/l1/) keep the statistics in float32, float64 when the evaluator runs the golden
(float64) copy.
"""

from __future__ import annotations

from suite_recipes.builder import const, problem, scalar, slug, tensor, uses, var
from suite_recipes.shapes import TOKEN_SWEEP
from suite_recipes.sweeps import pairs, per
from suite_recipes.template import render

_TOKENS = {"num_tokens": var("Tokens in the batch (batch x sequence)")}


def rmsnorm(m, *, gemma: bool = False, dtype: str | None = None):
    m = uses(m, "hidden_size", "rms_norm_eps", *(["torch_dtype"] if "torch_dtype" in m.config else []))
    hidden, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    dtype = dtype or m.config["torch_dtype"]
    variant = (
        "Gemma RMSNorm, which scales by (1 + weight) and rounds once at the end"
        if gemma
        else "RMSNorm as in the Hugging Face implementation (statistics in fp32, normalised value rounded, then weight)"
    )
    return problem(
        "L1",
        m,
        f"{slug(m)}_rmsnorm{'_1p' if gemma else ''}_h{hidden}",
        "rmsnorm",
        f"{m.name} {variant}, over hidden_size {hidden}, rms_norm_eps {eps}, {dtype} activations.",
        axes={**_TOKENS, "hidden_size": const(hidden, "hidden_size")},
        inputs={
            "hidden_states": tensor(["num_tokens", "hidden_size"], dtype),
            "weight": tensor(["hidden_size"], dtype),
            "eps": scalar(),
        },
        outputs={"output": tensor(["num_tokens", "hidden_size"], dtype)},
        reference=render("l1/gemma_rmsnorm.py" if gemma else "l1/rmsnorm.py"),
        workloads=per("num_tokens", TOKEN_SWEEP),
        scalars={"eps": eps},
    )


def layernorm(
    m, *, hidden_key: str, eps: float, eps_source: str, dtype: str, dtype_source: str, sequence: str, workloads
):
    keys = [hidden_key] + ([eps_source] if eps_source in m.config else [])
    keys += [dtype_source] if dtype_source in m.config else []
    m = uses(m, *keys)
    hidden = m.config[hidden_key]
    return problem(
        "L1",
        m,
        f"{slug(m)}_layernorm_h{hidden}",
        "layernorm",
        f"{m.name} LayerNorm (weight and bias) over {hidden_key} {hidden}, eps {eps} ({eps_source}), "
        f"{dtype} ({dtype_source}); {sequence}.",
        axes={
            "batch_size": var("Images or clips in the batch"),
            "seq_len": var(sequence),
            "hidden_size": const(hidden, hidden_key),
        },
        inputs={
            "hidden_states": tensor(["batch_size", "seq_len", "hidden_size"], dtype),
            "weight": tensor(["hidden_size"], dtype),
            "bias": tensor(["hidden_size"], dtype),
            "eps": scalar(),
        },
        outputs={"output": tensor(["batch_size", "seq_len", "hidden_size"], dtype)},
        reference=render("l1/layernorm.py"),
        workloads=pairs("batch_size", "seq_len", workloads),
        scalars={"eps": eps},
    )
