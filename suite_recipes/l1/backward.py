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

_LAYERNORM_BACKWARD = '''import torch


def run(grad_output, hidden_states, weight, eps):
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    x, dy, w = hidden_states.to(compute), grad_output.to(compute), weight.to(compute)
    mean = x.mean(dim=-1, keepdim=True)
    rstd = torch.rsqrt((x - mean).pow(2).mean(dim=-1, keepdim=True) + eps)
    x_hat = (x - mean) * rstd
    grad_weight = (dy * x_hat).sum(dim=0)
    grad_bias = dy.sum(dim=0)
    g = dy * w
    grad_input = rstd * (g - g.mean(dim=-1, keepdim=True) - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
    return grad_input.to(hidden_states.dtype), grad_weight.to(weight.dtype), grad_bias.to(weight.dtype)
'''

_LINEAR_BACKWARD = '''import torch


def run(grad_output, x, weight):
    return grad_output @ weight, grad_output.t() @ x
'''

_SOFTMAX_BACKWARD = '''import torch


def run(grad_output, probs):
    return probs * (grad_output - (grad_output * probs).sum(dim=-1, keepdim=True))
'''

_GELU_BACKWARD = '''import math

import torch


def run(grad_output, x):
    cdf = 0.5 * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
    pdf = torch.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))
    return grad_output * (cdf + x * pdf)
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

_EMBEDDING_BACKWARD = '''import torch


def run(token_ids, grad_output, num_embeddings):
    compute = torch.promote_types(grad_output.dtype, torch.float32)
    grad_weight = torch.zeros(num_embeddings, grad_output.shape[-1], dtype=compute, device=grad_output.device)
    return grad_weight.index_add_(0, token_ids, grad_output.to(compute))
'''

_CROSS_ENTROPY_BACKWARD = '''import torch


def run(logits, labels, grad_loss):
    x = logits.to(torch.promote_types(logits.dtype, torch.float32))
    probs = torch.softmax(x, dim=-1)
    minus_one = torch.full((labels.shape[0], 1), -1.0, dtype=x.dtype, device=x.device)
    grad = probs.scatter_add(-1, labels.unsqueeze(-1), minus_one) * grad_loss.unsqueeze(-1).to(x.dtype)
    return grad.to(logits.dtype)
'''

_PATCH_EMBED_BACKWARD = '''import torch


def run(grad_output, x):
    patch = x.shape[-1] // grad_output.shape[-1]
    weight_shape = (grad_output.shape[1], x.shape[1], patch, patch)
    grad_weight = torch.nn.grad.conv2d_weight(x, weight_shape, grad_output, stride=patch)
    return grad_weight, grad_output.sum(dim=(0, 2, 3))
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


def layernorm_backward(m, *, tokens_per_image: str, tokens):
    m = uses(m, "hidden_size", "layer_norm_eps", *(["torch_dtype"] if "torch_dtype" in m.config else []))
    hidden, eps = m.config["hidden_size"], m.config["layer_norm_eps"]
    return problem("L1", m, f"{slug(m)}_layernorm_backward_h{hidden}", "layernorm_backward",
              f"{m.name} LayerNorm backward over hidden_size {hidden} (layer_norm_eps {eps}): grad_input, weight "
              f"and bias gradients, fp32; tokens are images x {tokens_per_image}.",
              axes={"num_tokens": var("Tokens in the batch"), "hidden_size": const(hidden, "hidden_size")},
              inputs={"grad_output": tensor(["num_tokens", "hidden_size"], "float32"),
                      "hidden_states": tensor(["num_tokens", "hidden_size"], "float32"),
                      "weight": tensor(["hidden_size"], "float32"), "eps": scalar()},
              outputs={"grad_input": tensor(["num_tokens", "hidden_size"], "float32"),
                       "grad_weight": tensor(["hidden_size"], "float32"),
                       "grad_bias": tensor(["hidden_size"], "float32")},
              reference=_LAYERNORM_BACKWARD, workloads=per("num_tokens", tokens), scalars={"eps": eps},
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


def attention_softmax_backward(m):
    m = uses(m, "num_attention_heads", "patch_size", "image_size", "torch_dtype")
    heads = m.config["num_attention_heads"]
    tokens = (m.config["image_size"] // m.config["patch_size"]) ** 2 + 1
    return problem("L1", m, f"{slug(m)}_softmax_backward_h{heads}s{tokens}", "softmax_backward",
              f"{m.name} attention softmax backward (eager attention): grad_scores = P * (grad_P - sum(grad_P * P)) "
              f"over {heads} heads and {tokens} tokens ((image_size / patch_size)^2 + CLS); fp32 (torch_dtype).",
              axes={"batch_size": var("Images"), "num_heads": const(heads, "num_attention_heads"),
                    "seq_len": const(tokens, "tokens per image")},
              inputs={"grad_output": tensor(["batch_size", "num_heads", "seq_len", "seq_len"], "float32"),
                      "probs": tensor(["batch_size", "num_heads", "seq_len", "seq_len"], "float32",
                                      "Attention probabilities (rows sum to 1)")},
              outputs={"grad_scores": tensor(["batch_size", "num_heads", "seq_len", "seq_len"], "float32")},
              reference=_SOFTMAX_BACKWARD, workloads=per("batch_size", (1, 2, 3, 4, 6, 8, 12, 16)), backward=True)


def gelu_backward(m, *, tokens_per_image: int):
    m = uses(m, "intermediate_size", "patch_size")
    width = m.config["intermediate_size"]
    return problem("L1", m, f"{slug(m)}_gelu_backward_w{width}", "activation_backward",
              f"{m.name} MLP GELU (erf) backward on the fc1 output of width {width} (intermediate_size): "
              f"grad_output * (Phi(x) + x phi(x)); fp32; tokens are images x {tokens_per_image} (224 px, patch_size "
              f"{m.config['patch_size']}, plus CLS).",
              axes={"num_tokens": var("Tokens in the batch"), "width": const(width, "intermediate_size")},
              inputs={"grad_output": tensor(["num_tokens", "width"], "float32"),
                      "x": tensor(["num_tokens", "width"], "float32")},
              outputs={"grad_input": tensor(["num_tokens", "width"], "float32")},
              reference=_GELU_BACKWARD,
              workloads=per("num_tokens", [b * tokens_per_image for b in (1, 2, 3, 4, 5, 6, 7, 8)]),
              backward=True)


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


def embedding_backward(m):
    m = uses(m, "vocab_size", "d_model", "max_target_positions")
    vocab, hidden, positions = m.config["vocab_size"], m.config["d_model"], m.config["max_target_positions"]
    return problem("L1", m, f"{slug(m)}_embedding_backward_v{vocab}h{hidden}", "embedding_backward",
              f"{m.name} decoder token-embedding backward: fp16 output gradients of each token scattered and "
              f"summed (index_add) into an fp32 vocab_size {vocab} x d_model {hidden} weight gradient; repeated ids "
              f"accumulate; batches of up to max_target_positions ({positions}) tokens per transcript.",
              axes={"num_tokens": var("Tokens in the batch"), "vocab_size": const(vocab, "vocab_size"),
                    "hidden_size": const(hidden, "d_model")},
              inputs={"token_ids": tensor(["num_tokens"], "int64", "Token ids in [0, vocab_size)"),
                      "grad_output": tensor(["num_tokens", "hidden_size"], "float16"),
                      "num_embeddings": scalar("int64")},
              outputs={"grad_weight": tensor(["vocab_size", "hidden_size"], "float32")},
              reference=_EMBEDDING_BACKWARD, scalars={"num_embeddings": vocab},
              workloads=per("num_tokens", (1, 16, 448, 896, 1792, 3584, 7168, 14336)), backward=True,
              matched_ratio=1.0)


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


def patch_embed_backward(m, *, batches):
    m = uses(m, "hidden_size", "patch_size", "image_size", "torch_dtype")
    hidden, patch, size = m.config["hidden_size"], m.config["patch_size"], m.config["image_size"]
    grid = size // patch
    return problem("L1", m, f"{slug(m)}_patch_embed_backward_p{patch}h{hidden}", "conv2d_backward",
              f"{m.name} patch-embedding backward when fine-tuning: weight and bias gradients of Conv2d(3, "
              f"{hidden}, kernel = stride = {patch}) on {size} px images (no input gradient: pixels need none); "
              "fp32 (torch_dtype).",
              axes={"batch_size": var("Images"), "image_size": const(size, "image_size"),
                    "grid": const(grid, "image_size / patch_size"), "hidden_size": const(hidden, "hidden_size"),
                    "patch": const(patch, "patch_size")},
              inputs={"grad_output": tensor(["batch_size", "hidden_size", "grid", "grid"], "float32"),
                      "x": tensor(["batch_size", 3, "image_size", "image_size"], "float32")},
              outputs={"grad_weight": tensor(["hidden_size", 3, "patch", "patch"], "float32"),
                       "grad_bias": tensor(["hidden_size"], "float32")},
              reference=_PATCH_EMBED_BACKWARD, workloads=per("batch_size", batches), backward=True)

