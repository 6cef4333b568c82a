"""L1: single operators as they occur in real models (norms, activations, GEMMs, attention, ...)."""

from __future__ import annotations

from solbench.suite.catalog.models import model
from solbench.suite.catalog.shapes import TOKEN_SWEEP, tokens
from solbench.suite.draft import ProblemDraft
from solbench.suite.tolerances import tolerance_for

LLAMA_31_8B = model("Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "language",
                    {"hidden_size": 4096, "rms_norm_eps": 1e-05})

_RMSNORM = '''import torch


@torch.no_grad()
def run(hidden_states, weight, eps):
    x = hidden_states.to(torch.float32)
    variance = x.pow(2).mean(dim=-1, keepdim=True)
    return (x * torch.rsqrt(variance + eps)).to(hidden_states.dtype) * weight
'''


def rmsnorm(m, *, hidden_key: str = "hidden_size", eps_key: str = "rms_norm_eps",
            dtype: str = "bfloat16") -> ProblemDraft:
    hidden = m.config[hidden_key]
    slug = m.name.lower().replace(".", "").replace(" ", "_")
    return ProblemDraft(
        set="L1", name=f"{slug}_rmsnorm_h{hidden}", op_type="rmsnorm", model=m,
        description=(f"{m.name} RMSNorm over the hidden size {hidden} ({hidden_key}), eps {m.config[eps_key]} "
                     f"({eps_key}); statistics in fp32 as in the Hugging Face implementation."),
        axes={"num_tokens": {"type": "var", "description": "Tokens in the batch (batch x sequence)"},
              "hidden_size": {"type": "const", "value": hidden, "description": hidden_key}},
        inputs={"hidden_states": {"shape": ["num_tokens", "hidden_size"], "dtype": dtype},
                "weight": {"shape": ["hidden_size"], "dtype": dtype},
                "eps": {"shape": None, "dtype": "float32"}},
        outputs={"output": {"shape": ["num_tokens", "hidden_size"], "dtype": dtype}},
        reference=_RMSNORM, workloads=tokens(TOKEN_SWEEP), scalars={"eps": m.config[eps_key]},
        tolerance=tolerance_for(dtype))


def drafts() -> list[ProblemDraft]:
    return [rmsnorm(LLAMA_31_8B)]
