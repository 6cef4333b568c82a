"""Backward passes of single layers, written as the explicit gradient formulas a training kernel computes."""

from __future__ import annotations

from suite_recipes.builder import const, problem, scalar, slug, tensor, uses, var
from suite_recipes.sweeps import per
from suite_recipes.shapes import SMALL_TOKEN_SWEEP, TOKEN_SWEEP

_RMSNORM_BACKWARD = '''import torch


def run(grad_output, hidden_states, weight, eps):
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    x, dy, w = hidden_states.to(compute), grad_output.to(compute), weight.to(compute)
    rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    x_hat = x * rstd
    grad_weight = (dy * x_hat).sum(dim=0)
    g = dy * w
    grad_input = rstd * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
    return grad_input.to(hidden_states.dtype), grad_weight.to(weight.dtype)
'''


_LINEAR_BACKWARD = '''import torch


def run(grad_output, x, weight):
    return grad_output @ weight, grad_output.t() @ x
'''


_SWIGLU_BACKWARD = '''import torch


def run(grad_output, gate, up):
    compute = torch.promote_types(gate.dtype, torch.float32)
    dy, g, u = grad_output.to(compute), gate.to(compute), up.to(compute)
    sigmoid = torch.sigmoid(g)
    silu = g * sigmoid
    grad_gate = dy * u * sigmoid * (1.0 + g * (1.0 - sigmoid))
    return grad_gate.to(gate.dtype), (dy * silu).to(up.dtype)
'''

_GEGLU_BACKWARD = '''import math

import torch


def run(grad_output, gate, up):
    compute = torch.promote_types(gate.dtype, torch.float32)
    dy, g, u = grad_output.to(compute), gate.to(compute), up.to(compute)
    k = math.sqrt(2.0 / math.pi)
    t = torch.tanh(k * (g + 0.044715 * g * g * g))
    gelu = 0.5 * g * (1.0 + t)
    d_gelu = 0.5 * (1.0 + t) + 0.5 * g * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * g * g)
    return (dy * u * d_gelu).to(gate.dtype), (dy * gelu).to(up.dtype)
'''


_CROSS_ENTROPY_BACKWARD = '''import torch


def run(logits, labels, grad_loss):
    x = logits.to(torch.promote_types(logits.dtype, torch.float32))
    probs = torch.softmax(x, dim=-1)
    minus_one = torch.full((labels.shape[0], 1), -1.0, dtype=x.dtype, device=x.device)
    grad = probs.scatter_add(-1, labels.unsqueeze(-1), minus_one) * grad_loss.unsqueeze(-1).to(x.dtype)
    return grad.to(logits.dtype)
'''


def rmsnorm_backward(m):
    m = uses(m, "hidden_size", "rms_norm_eps", *(["torch_dtype"] if "torch_dtype" in m.config else []))
    hidden, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    dtype = m.config.get("torch_dtype", "bfloat16")
    return problem("L1", m, f"{slug(m)}_rmsnorm_backward_h{hidden}", "rmsnorm_backward",
              f"{m.name} RMSNorm backward over hidden_size {hidden} (rms_norm_eps {eps}): grad_input and the "
              f"weight gradient summed over tokens, statistics recomputed in fp32; {dtype} activations"
              f"{' (torch_dtype)' if 'torch_dtype' in m.config else ' (bf16 mixed-precision training)'}.",
              axes={"num_tokens": var("Tokens in the micro-batch"), "hidden_size": const(hidden, "hidden_size")},
              inputs={"grad_output": tensor(["num_tokens", "hidden_size"], dtype),
                      "hidden_states": tensor(["num_tokens", "hidden_size"], dtype),
                      "weight": tensor(["hidden_size"], dtype), "eps": scalar()},
              outputs={"grad_input": tensor(["num_tokens", "hidden_size"], dtype),
                       "grad_weight": tensor(["hidden_size"], dtype)},
              reference=_RMSNORM_BACKWARD, workloads=per("num_tokens", TOKEN_SWEEP), scalars={"eps": eps},
              backward=True)


def linear_backward(m, *, what: str, keys, in_features: int, out_features: int, dtype: str):
    m = uses(m, *keys, "torch_dtype")
    return problem("L1", m, f"{slug(m)}_{what.split()[0]}_backward_{in_features}x{out_features}", "gemm_backward",
              f"{m.name} {what} backward: grad_input = grad_output W and grad_weight = grad_output^T x, for "
              f"in_features {in_features}, out_features {out_features}; {dtype} (torch_dtype), fp32 accumulation.",
              axes={"num_tokens": var("Tokens in the micro-batch"), "in_features": const(in_features, "in_features"),
                    "out_features": const(out_features, "out_features")},
              inputs={"grad_output": tensor(["num_tokens", "out_features"], dtype),
                      "x": tensor(["num_tokens", "in_features"], dtype),
                      "weight": tensor(["out_features", "in_features"], dtype)},
              outputs={"grad_input": tensor(["num_tokens", "in_features"], dtype),
                       "grad_weight": tensor(["out_features", "in_features"], dtype)},
              reference=_LINEAR_BACKWARD, workloads=per("num_tokens", SMALL_TOKEN_SWEEP), backward=True)


def gated_activation_backward(m, *, tokens=(1, 7, 16, 32, 64, 100, 128, 255)):
    m = uses(m, "intermediate_size", "hidden_act", "torch_dtype")
    act, width, dtype = m.config["hidden_act"], m.config["intermediate_size"], m.config["torch_dtype"]
    op = "swiglu" if act == "silu" else "geglu"
    return problem("L1", m, f"{slug(m)}_{op}_backward_i{width}", "activation_backward",
              f"{m.name} {op.upper()} backward (hidden_act {act}): gradients of act(gate) * up with respect to gate "
              f"and up, width {width} (intermediate_size), fp32 math on {dtype} tensors (torch_dtype).",
              axes={"num_tokens": var("Tokens in the micro-batch"), "width": const(width, "intermediate_size")},
              inputs={"grad_output": tensor(["num_tokens", "width"], dtype),
                      "gate": tensor(["num_tokens", "width"], dtype), "up": tensor(["num_tokens", "width"], dtype)},
              outputs={"grad_gate": tensor(["num_tokens", "width"], dtype),
                       "grad_up": tensor(["num_tokens", "width"], dtype)},
              reference=_SWIGLU_BACKWARD if act == "silu" else _GEGLU_BACKWARD,
              workloads=per("num_tokens", tokens), backward=True)


def cross_entropy_backward(m, *, tokens):
    m = uses(m, "vocab_size", *(["torch_dtype"] if "torch_dtype" in m.config else []))
    vocab = m.config["vocab_size"]
    return problem("L1", m, f"{slug(m)}_cross_entropy_backward_v{vocab}", "cross_entropy_backward",
              f"{m.name} cross-entropy backward over vocab_size {vocab}: (softmax(logits) - onehot(label)) * "
              "grad_loss per token, computed in fp32 from bf16 logits, written as bf16 logits gradient.",
              axes={"num_tokens": var("Tokens in the chunk"), "vocab_size": const(vocab, "vocab_size")},
              inputs={"logits": tensor(["num_tokens", "vocab_size"], "bfloat16"),
                      "labels": tensor(["num_tokens"], "int64", "Target token ids in [0, vocab_size)"),
                      "grad_loss": tensor(["num_tokens"], "float32")},
              outputs={"grad_logits": tensor(["num_tokens", "vocab_size"], "bfloat16")},
              reference=_CROSS_ENTROPY_BACKWARD, workloads=per("num_tokens", tokens), backward=True,
              atol=1e-12, matched_ratio=1.0)

