"""Backward passes of single layers, written as the explicit gradient formulas a training kernel computes."""

from __future__ import annotations

from suite_recipes.builder import const, problem, scalar, slug, tensor, uses, var
from suite_recipes.shapes import SMALL_TOKEN_SWEEP, TOKEN_SWEEP
from suite_recipes.sweeps import per
from suite_recipes.template import render


def rmsnorm_backward(m):
    m = uses(m, "hidden_size", "rms_norm_eps", *(["torch_dtype"] if "torch_dtype" in m.config else []))
    hidden, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    dtype = m.config.get("torch_dtype", "bfloat16")
    return problem(
        "L1",
        m,
        f"{slug(m)}_rmsnorm_backward_h{hidden}",
        "rmsnorm_backward",
        f"{m.name} RMSNorm backward over hidden_size {hidden} (rms_norm_eps {eps}): grad_input and the "
        f"weight gradient summed over tokens, statistics recomputed in fp32; {dtype} activations"
        f"{' (torch_dtype)' if 'torch_dtype' in m.config else ' (bf16 mixed-precision training)'}.",
        axes={"num_tokens": var("Tokens in the micro-batch"), "hidden_size": const(hidden, "hidden_size")},
        inputs={
            "grad_output": tensor(["num_tokens", "hidden_size"], dtype),
            "hidden_states": tensor(["num_tokens", "hidden_size"], dtype),
            "weight": tensor(["hidden_size"], dtype),
            "eps": scalar(),
        },
        outputs={
            "grad_input": tensor(["num_tokens", "hidden_size"], dtype),
            "grad_weight": tensor(["hidden_size"], dtype),
        },
        reference=render("l1/rmsnorm_backward.py"),
        workloads=per("num_tokens", TOKEN_SWEEP),
        scalars={"eps": eps},
        backward=True,
    )


def linear_backward(m, *, what: str, keys, in_features: int, out_features: int, dtype: str):
    m = uses(m, *keys, "torch_dtype")
    return problem(
        "L1",
        m,
        f"{slug(m)}_{what.split()[0]}_backward_{in_features}x{out_features}",
        "gemm_backward",
        f"{m.name} {what} backward: grad_input = grad_output W and grad_weight = grad_output^T x, for "
        f"in_features {in_features}, out_features {out_features}; {dtype} (torch_dtype), fp32 accumulation.",
        axes={
            "num_tokens": var("Tokens in the micro-batch"),
            "in_features": const(in_features, "in_features"),
            "out_features": const(out_features, "out_features"),
        },
        inputs={
            "grad_output": tensor(["num_tokens", "out_features"], dtype),
            "x": tensor(["num_tokens", "in_features"], dtype),
            "weight": tensor(["out_features", "in_features"], dtype),
        },
        outputs={
            "grad_input": tensor(["num_tokens", "in_features"], dtype),
            "grad_weight": tensor(["out_features", "in_features"], dtype),
        },
        reference=render("l1/linear_backward.py"),
        workloads=per("num_tokens", SMALL_TOKEN_SWEEP),
        backward=True,
    )


def gated_activation_backward(m, *, tokens=(1, 7, 16, 32, 64, 100, 128, 255)):
    m = uses(m, "intermediate_size", "hidden_act", "torch_dtype")
    act, width, dtype = m.config["hidden_act"], m.config["intermediate_size"], m.config["torch_dtype"]
    op = "swiglu" if act == "silu" else "geglu"
    return problem(
        "L1",
        m,
        f"{slug(m)}_{op}_backward_i{width}",
        "activation_backward",
        f"{m.name} {op.upper()} backward (hidden_act {act}): gradients of act(gate) * up with respect to gate "
        f"and up, width {width} (intermediate_size), fp32 math on {dtype} tensors (torch_dtype).",
        axes={"num_tokens": var("Tokens in the micro-batch"), "width": const(width, "intermediate_size")},
        inputs={
            "grad_output": tensor(["num_tokens", "width"], dtype),
            "gate": tensor(["num_tokens", "width"], dtype),
            "up": tensor(["num_tokens", "width"], dtype),
        },
        outputs={
            "grad_gate": tensor(["num_tokens", "width"], dtype),
            "grad_up": tensor(["num_tokens", "width"], dtype),
        },
        reference=render("l1/swiglu_backward.py" if act == "silu" else "l1/geglu_backward.py"),
        workloads=per("num_tokens", tokens),
        backward=True,
    )


def cross_entropy_backward(m, *, tokens):
    m = uses(m, "vocab_size", *(["torch_dtype"] if "torch_dtype" in m.config else []))
    vocab = m.config["vocab_size"]
    return problem(
        "L1",
        m,
        f"{slug(m)}_cross_entropy_backward_v{vocab}",
        "cross_entropy_backward",
        f"{m.name} cross-entropy backward over vocab_size {vocab}: (softmax(logits) - onehot(label)) * "
        "grad_loss per token, computed in fp32 from bf16 logits, written as bf16 logits gradient.",
        axes={"num_tokens": var("Tokens in the chunk"), "vocab_size": const(vocab, "vocab_size")},
        inputs={
            "logits": tensor(["num_tokens", "vocab_size"], "bfloat16"),
            "labels": tensor(["num_tokens"], "int64", "Target token ids in [0, vocab_size)"),
            "grad_loss": tensor(["num_tokens"], "float32"),
        },
        outputs={"grad_logits": tensor(["num_tokens", "vocab_size"], "bfloat16")},
        reference=render("l1/cross_entropy_backward.py"),
        workloads=per("num_tokens", tokens),
        backward=True,
        atol=1e-12,
        matched_ratio=1.0,
    )
