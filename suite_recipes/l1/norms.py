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

_COHERE_LAYERNORM = '''import torch


@torch.no_grad()
def run(hidden_states, weight, eps):
    compute = torch.promote_types(hidden_states.dtype, torch.float32)
    x = hidden_states.to(compute)
    mean = x.mean(dim=-1, keepdim=True)
    variance = (x - mean).pow(2).mean(dim=-1, keepdim=True)
    x = (x - mean) * torch.rsqrt(variance + eps)
    return (weight.to(compute) * x).to(hidden_states.dtype)
'''

_GROUPNORM = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(hidden_states, weight, bias, eps):
    return F.group_norm(hidden_states, 32, weight, bias, eps)
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


def cohere_layernorm(m):
    m = uses(m, "hidden_size", "layer_norm_eps", "torch_dtype")
    hidden, eps, dtype = m.config["hidden_size"], m.config["layer_norm_eps"], m.config["torch_dtype"]
    return problem("L1", m, f"{slug(m)}_layernorm_nobias_h{hidden}", "layernorm",
              f"{m.name} CohereLayerNorm: mean-centred LayerNorm with a weight and no bias, statistics in fp32, "
              f"over hidden_size {hidden}, layer_norm_eps {eps}, {dtype} activations.",
              axes={**_TOKENS, "hidden_size": const(hidden, "hidden_size")},
              inputs={"hidden_states": tensor(["num_tokens", "hidden_size"], dtype),
                      "weight": tensor(["hidden_size"], dtype), "eps": scalar()},
              outputs={"output": tensor(["num_tokens", "hidden_size"], dtype)},
              reference=_COHERE_LAYERNORM, workloads=per("num_tokens", (1, 7, 32, 128, 255, 512, 777, 1024)), scalars={"eps": eps})


def vae_groupnorm(m):
    """The SDXL VAE decoder's GroupNorm(32, C, eps=1e-6) at each decoder stage, for several image sizes."""
    m = uses(m, "ch", "ch_mult")
    channels = [m.config["ch"] * k for k in m.config["ch_mult"]]  # 128, 256, 512, 512
    stages = [(512, 32), (512, 64), (512, 128), (256, 256), (128, 512), (512, 96), (512, 192), (128, 384)]
    assert all(c in channels for c, _ in stages)
    return problem("L1", m, f"{slug(m)}_groupnorm_g32", "groupnorm",
              f"{m.name} decoder GroupNorm with 32 groups and eps 1e-6 (Normalize in the ldm/sgm autoencoder "
              f"code) on one image; channels are ch x ch_mult = {channels} at the decoder stages, spatial size "
              "from the 32..128 latents of 256..1024 px images up to the 8x upsampled output stages; fp32, as "
              "the SDXL VAE is run in fp32 (it overflows in fp16).",
              axes={"channels": var("ch x ch_mult[stage]"), "height": var("Feature map height"),
                    "width": var("Feature map width")},
              inputs={"hidden_states": tensor([1, "channels", "height", "width"], "float32"),
                      "weight": tensor(["channels"], "float32"), "bias": tensor(["channels"], "float32"),
                      "eps": scalar()},
              outputs={"output": tensor([1, "channels", "height", "width"], "float32")},
              reference=_GROUPNORM, workloads=[{"channels": c, "height": s, "width": s} for c, s in stages],
              scalars={"eps": 1e-6})
