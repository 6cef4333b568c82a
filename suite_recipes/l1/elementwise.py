"""Activations, rotary embeddings and a chunked cumulative sum: elementwise or row-wise ops on activations."""

from __future__ import annotations

from suite_recipes.builder import const, expr, problem, slug, tensor, uses, var
from suite_recipes.sweeps import pairs, per
from suite_recipes.shapes import TOKEN_SWEEP

_GATED = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(gate, up):
    return {activation} * up
'''
_GATED_ACTIVATIONS = {"silu": ("F.silu(gate)", "SwiGLU: silu(gate) * up"),
                      "gelu_pytorch_tanh": ('F.gelu(gate, approximate="tanh")', "GeGLU: gelu_tanh(gate) * up")}

_ACTIVATION = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(hidden_states):
    return {activation}
'''
_ACTIVATIONS = {"gelu": ("F.gelu(hidden_states)", "GELU (erf form)"),
                "quick_gelu": ("hidden_states * torch.sigmoid(1.702 * hidden_states)",
                               "QuickGELU: x * sigmoid(1.702 x)")}

_ROPE = '''import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


@torch.no_grad()
def run(query, key, cos, sin):
    rotary_dim = cos.shape[-1]
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    q_rot, q_pass = query[..., :rotary_dim], query[..., rotary_dim:]
    k_rot, k_pass = key[..., :rotary_dim], key[..., rotary_dim:]
    q_embed = torch.cat([q_rot * cos + rotate_half(q_rot) * sin, q_pass], dim=-1)
    k_embed = torch.cat([k_rot * cos + rotate_half(k_rot) * sin, k_pass], dim=-1)
    return q_embed, k_embed
'''

_CHUNK_CUMSUM = '''import torch


@torch.no_grad()
def run(dt_a):
    return torch.cumsum(dt_a, dim=-1)
'''

CAPPED_TOKENS = (1, 7, 32, 128, 255, 512, 777, 1024)
"""Token counts for ops whose rows are very wide (intermediate sizes above 10k)."""


def gated_activation(m, *, tp: int = 1, tokens=TOKEN_SWEEP):
    m = uses(m, "intermediate_size", "hidden_act", "torch_dtype")
    act, dtype = m.config["hidden_act"], m.config["torch_dtype"]
    code, what = _GATED_ACTIVATIONS[act]
    width = m.config["intermediate_size"] // tp
    shard = f" per GPU at tensor parallelism {tp} (intermediate_size {m.config['intermediate_size']} / {tp})" \
        if tp > 1 else " (intermediate_size)"
    op = "swiglu" if act == "silu" else "geglu"
    return problem("L1", m, f"{slug(m)}_{op}_i{width}", op,
              f"{m.name} MLP activation {what} (hidden_act {act}) on the gate and up projections, "
              f"width {width}{shard}, {dtype} (torch_dtype).",
              axes={"num_tokens": var("Tokens in the batch"), "width": const(width, "intermediate width")},
              inputs={"gate": tensor(["num_tokens", "width"], dtype), "up": tensor(["num_tokens", "width"], dtype)},
              outputs={"output": tensor(["num_tokens", "width"], dtype)},
              reference=_GATED.format(activation=code), workloads=per("num_tokens", tokens))


def activation(m, *, act_key: str, width_key: str, dtype: str, dtype_source: str, rows: str, workloads):
    m = uses(m, act_key, width_key, *([dtype_source] if dtype_source in m.config else []))
    act, width = m.config[act_key], m.config[width_key]
    code, what = _ACTIVATIONS[act]
    return problem("L1", m, f"{slug(m)}_{act.replace('_', '')}_w{width}", "activation",
              f"{m.name} MLP activation {what} ({act_key} {act}) on the fc1 output of width {width} "
              f"({width_key}), {dtype} ({dtype_source}); rows are {rows}.",
              axes={"num_tokens": var(rows), "width": const(width, width_key)},
              inputs={"hidden_states": tensor(["num_tokens", "width"], dtype)},
              outputs={"output": tensor(["num_tokens", "width"], dtype)},
              reference=_ACTIVATION.format(activation=code), workloads=per("num_tokens", workloads))


def rope(m):
    partial = "partial_rotary_factor" in m.config
    m = uses(m, "num_attention_heads", "num_key_value_heads", "derived.head_dim", "torch_dtype",
             *(["partial_rotary_factor"] if partial else []))
    heads, kv_heads, head_dim = (m.config[k] for k in ("num_attention_heads", "num_key_value_heads", "derived.head_dim"))
    rotary = int(head_dim * m.config.get("partial_rotary_factor", 1.0))
    dtype = m.config["torch_dtype"]
    part = f"the first {rotary} of {head_dim} dims (partial_rotary_factor {m.config['partial_rotary_factor']}), " \
           "the rest passed through" if partial else f"all {head_dim} dims"
    return problem("L1", m, f"{slug(m)}_rope_d{rotary}", "rope",
              f"{m.name} rotary position embedding (rotate_half form with precomputed cos/sin, as in Hugging Face) "
              f"applied to query ({heads} heads) and key ({kv_heads} KV heads) over {part}; {dtype} (torch_dtype).",
              axes={"num_tokens": var("Tokens in the batch"), "num_heads": const(heads, "num_attention_heads"),
                    "num_kv_heads": const(kv_heads, "num_key_value_heads"),
                    "head_dim": const(head_dim, "head_dim"), "rotary_dim": const(rotary, "head_dim x partial_rotary_factor")},
              inputs={"query": tensor(["num_tokens", "num_heads", "head_dim"], dtype),
                      "key": tensor(["num_tokens", "num_kv_heads", "head_dim"], dtype),
                      "cos": tensor(["num_tokens", "rotary_dim"], dtype),
                      "sin": tensor(["num_tokens", "rotary_dim"], dtype)},
              outputs={"query_out": tensor(["num_tokens", "num_heads", "head_dim"], dtype),
                       "key_out": tensor(["num_tokens", "num_kv_heads", "head_dim"], dtype)},
              reference=_ROPE, workloads=per("num_tokens", TOKEN_SWEEP))


def mamba2_chunk_cumsum(m):
    m = uses(m, "derived.mamba_num_heads", "chunk_size")
    heads, chunk = m.config["derived.mamba_num_heads"], m.config["chunk_size"]
    sequences = [(1, 256), (1, 1024), (1, 2048), (1, 8192), (4, 2048), (8, 4096), (16, 1024), (2, 32768)]
    return problem("L1", m, f"{slug(m)}_chunk_cumsum_h{heads}", "cumsum",
              f"{m.name} SSD chunked scan: the cumulative sum of A*dt within each chunk of chunk_size {chunk} "
              f"(A_cumsum in ssd_minimal / the chunk-cumsum kernel), over {heads} heads (d_inner / headdim); fp32.",
              axes={"batch_size": var("Sequences"), "seq_len": var("Tokens per sequence, a multiple of chunk_size"),
                    "num_chunks": expr(f"seq_len // {chunk}", "Chunks per sequence"),
                    "num_heads": const(heads, "d_inner / headdim"), "chunk_size": const(chunk, "chunk_size")},
              inputs={"dt_a": tensor(["batch_size", "num_heads", "num_chunks", "chunk_size"], "float32")},
              outputs={"dt_a_cumsum": tensor(["batch_size", "num_heads", "num_chunks", "chunk_size"], "float32")},
              reference=_CHUNK_CUMSUM, workloads=pairs("batch_size", "seq_len", sequences))
