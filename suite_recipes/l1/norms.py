"""Normalisation layers: RMSNorm (Llama, Gemma's 1 + weight), LayerNorm (ViT, DINOv2, Whisper, Cohere), GroupNorm."""

from __future__ import annotations

from suite_recipes.builder import const, problem, scalar, slug, tensor, uses, var
from suite_recipes.sweeps import pairs, per
from suite_recipes.shapes import TOKEN_SWEEP

# float32 for the statistics, float64 when the evaluator runs the golden (float64) copy.
_RMSNORM = '''import torch


@torch.no_grad()
def run(hidden_states, weight, eps):
    x = hidden_states.to(torch.promote_types(hidden_states.dtype, torch.float32))
    variance = x.pow(2).mean(dim=-1, keepdim=True)
    return (x * torch.rsqrt(variance + eps)).to(hidden_states.dtype) * weight
'''

_GEMMA_RMSNORM = '''import torch


@torch.no_grad()
def run(hidden_states, weight, eps):
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    x = hidden_states.to(compute)
    output = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    output = output * (1.0 + weight.to(compute))
    return output.to(hidden_states.dtype)
'''

_LAYERNORM = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(hidden_states, weight, bias, eps):
    return F.layer_norm(hidden_states, (hidden_states.shape[-1],), weight, bias, eps)
'''


_TOKENS = {"num_tokens": var("Tokens in the batch (batch x sequence)")}


def rmsnorm(m, *, gemma: bool = False, dtype: str | None = None):
    m = uses(m, "hidden_size", "rms_norm_eps", *(["torch_dtype"] if "torch_dtype" in m.config else []))
    hidden, eps = m.config["hidden_size"], m.config["rms_norm_eps"]
    dtype = dtype or m.config["torch_dtype"]
    variant = "Gemma RMSNorm, which scales by (1 + weight) and rounds once at the end" if gemma else \
        "RMSNorm as in the Hugging Face implementation (statistics in fp32, normalised value rounded, then weight)"
    return problem("L1", m, f"{slug(m)}_rmsnorm{'_1p' if gemma else ''}_h{hidden}", "rmsnorm",
              f"{m.name} {variant}, over hidden_size {hidden}, rms_norm_eps {eps}, {dtype} activations.",
              axes={**_TOKENS, "hidden_size": const(hidden, "hidden_size")},
              inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], dtype),
                      "weight": tensor(["hidden_size"], dtype), "eps": scalar()},
              outputs={"output": tensor(["num_tokens", "hidden_size"], dtype)},
              reference=_GEMMA_RMSNORM if gemma else _RMSNORM, workloads=per("num_tokens", TOKEN_SWEEP),
              scalars={"eps": eps})


def layernorm(m, *, hidden_key: str, eps: float, eps_source: str, dtype: str, dtype_source: str,
              sequence: str, workloads):
    keys = [hidden_key] + ([eps_source] if eps_source in m.config else [])
    keys += [dtype_source] if dtype_source in m.config else []
    m = uses(m, *keys)
    hidden = m.config[hidden_key]
    return problem("L1", m, f"{slug(m)}_layernorm_h{hidden}", "layernorm",
              f"{m.name} LayerNorm (weight and bias) over {hidden_key} {hidden}, eps {eps} ({eps_source}), "
              f"{dtype} ({dtype_source}); {sequence}.",
              axes={"batch_size": var("Images or clips in the batch"), "seq_len": var(sequence),
                    "hidden_size": const(hidden, hidden_key)},
              inputs={"hidden_states": tensor(["batch_size", "seq_len", "hidden_size"], dtype),
                      "weight": tensor(["hidden_size"], dtype), "bias": tensor(["hidden_size"], dtype),
                      "eps": scalar()},
              outputs={"output": tensor(["batch_size", "seq_len", "hidden_size"], dtype)},
              reference=_LAYERNORM, workloads=pairs("batch_size", "seq_len", workloads), scalars={"eps": eps})

