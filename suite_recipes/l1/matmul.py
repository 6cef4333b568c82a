"""Matrix-class ops: linear layers, attention, and embedding lookups (DLRM's feature interaction is in the DLRM set)."""

from __future__ import annotations

from suite_recipes.builder import const, problem, slug, tensor, uses, var
from suite_recipes.sweeps import pairs, per
from suite_recipes.shapes import SMALL_TOKEN_SWEEP

_LINEAR = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run({arguments}):
    return F.linear({arguments})
'''

_SDPA = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(query, key, value):
    return F.scaled_dot_product_attention(query, key, value, is_causal={causal}, enable_gqa={gqa})
'''

_EMBEDDING = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(token_ids, weight):
    return F.embedding(token_ids, weight)
'''

_EMBEDDING_BAG = '''import torch
import torch.nn.functional as F


@torch.no_grad()
def run(indices, weight):
    return F.embedding(indices, weight).sum(dim=1)
'''

def linear(m, *, what: str, keys, in_features: int, out_features: int, formula: str, bias: bool, dtype: str,
           dtype_source: str, rows: str = "Tokens in the batch", tokens=SMALL_TOKEN_SWEEP):
    m = uses(m, *keys, *([dtype_source] if dtype_source in m.config else []))
    arguments = "x, weight, bias" if bias else "x, weight"
    inputs = {"x": tensor(["num_tokens", "in_features"], dtype),
              "weight": tensor(["out_features", "in_features"], dtype)}
    if bias:
        inputs["bias"] = tensor(["out_features"], dtype)
    return problem("L1", m, f"{slug(m)}_{what.split()[0]}_{in_features}x{out_features}", "gemm",
              f"{m.name} {what}: y = x W^T{' + b' if bias else ''} with in_features {in_features} and "
              f"out_features {formula}; {dtype} ({dtype_source}).",
              axes={"num_tokens": var(rows), "in_features": const(in_features, "in_features"),
                    "out_features": const(out_features, formula)},
              inputs=inputs, outputs={"y": tensor(["num_tokens", "out_features"], dtype)},
              reference=_LINEAR.format(arguments=arguments), workloads=per("num_tokens", tokens))


def attention(m, *, keys, heads: int, kv_heads: int, head_dim: int, causal: bool, dtype: str, dtype_source: str,
              what: str, sequences):
    m = uses(m, *keys, *([dtype_source] if dtype_source in m.config else []))
    kind = "causal" if causal else "full"
    gqa = f"grouped-query ({heads} query heads, {kv_heads} KV heads)" if kv_heads != heads else f"{heads} heads"
    return problem("L1", m, f"{slug(m)}_attention_{kind}_h{heads}kv{kv_heads}d{head_dim}", "attention",
              f"{m.name} {what}: {kind} scaled-dot-product attention, {gqa}, head_dim {head_dim}, scale "
              f"1/sqrt(head_dim); {dtype} ({dtype_source}).",
              axes={"batch_size": var("Sequences or images"), "seq_len": var("Tokens per sequence"),
                    "num_heads": const(heads, "query heads"), "num_kv_heads": const(kv_heads, "key/value heads"),
                    "head_dim": const(head_dim, "head_dim")},
              inputs={"query": tensor(["batch_size", "num_heads", "seq_len", "head_dim"], dtype),
                      "key": tensor(["batch_size", "num_kv_heads", "seq_len", "head_dim"], dtype),
                      "value": tensor(["batch_size", "num_kv_heads", "seq_len", "head_dim"], dtype)},
              outputs={"output": tensor(["batch_size", "num_heads", "seq_len", "head_dim"], dtype)},
              reference=_SDPA.format(causal=causal, gqa=kv_heads != heads),
              workloads=pairs("batch_size", "seq_len", sequences))


def embedding(m, *, dtype: str, what: str, tokens):
    m = uses(m, "vocab_size", "d_model", "max_target_positions")
    vocab, hidden = m.config["vocab_size"], m.config["d_model"]
    return problem("L1", m, f"{slug(m)}_embedding_v{vocab}h{hidden}", "embedding",
              f"{m.name} {what}: token embedding lookup in a vocab_size {vocab} x d_model {hidden} table, {dtype}; "
              f"token counts from one decode step up to batches of max_target_positions "
              f"({m.config['max_target_positions']}) tokens.",
              axes={"num_tokens": var("Tokens looked up"), "vocab_size": const(vocab, "vocab_size"),
                    "hidden_size": const(hidden, "d_model")},
              inputs={"token_ids": tensor(["num_tokens"], "int64", "Token ids in [0, vocab_size)"),
                      "weight": tensor(["vocab_size", "hidden_size"], dtype)},
              outputs={"output": tensor(["num_tokens", "hidden_size"], dtype)},
              reference=_EMBEDDING, workloads=per("num_tokens", tokens))


def dlrm_embedding_bag(m, *, table: int):
    m = uses(m, "embedding_dim", "num_embeddings_per_feature", "multi_hot_sizes")
    rows, hot = m.config["num_embeddings_per_feature"][table], m.config["multi_hot_sizes"][table]
    dim = m.config["embedding_dim"]
    batches = (1, 64, 256, 1000, 2048, 4096, 8192, 16384)
    return problem("L1", m, f"{slug(m)}_embedding_bag_t{table}_r{rows}h{hot}", "embedding_bag",
              f"{m.name} sparse feature {table}: EmbeddingBag(mode='sum') over a {rows} x {dim} fp32 table "
              f"(num_embeddings_per_feature[{table}], embedding_dim) with multi_hot_sizes[{table}] = {hot} ids per "
              "sample; per-GPU batches up to 16384 (global_batch_size 65536 over 4-8 GPUs), and the whole global batch.",
              axes={"batch_size": var("Samples"), "hotness": const(hot, f"multi_hot_sizes[{table}]"),
                    "num_embeddings": const(rows, f"num_embeddings_per_feature[{table}]"),
                    "embedding_dim": const(dim, "embedding_dim")},
              inputs={"indices": tensor(["batch_size", "hotness"], "int64", "Row ids in [0, num_embeddings)"),
                      "weight": tensor(["num_embeddings", "embedding_dim"], "float32")},
              outputs={"pooled": tensor(["batch_size", "embedding_dim"], "float32")},
              reference=_EMBEDDING_BAG, workloads=per("batch_size", batches))


_ATTENTION_BACKWARD = '''import torch


def make_inputs(axes_and_scalars, device):
    """out and lse come from the forward pass on the same q, k, v, as a training step saves them."""
    shape = tuple(axes_and_scalars[k] for k in ("batch_size", "num_heads", "seq_len", "head_dim"))
    query, key, value, grad_output = (torch.randn(shape, device=device).to(torch.{dtype}) for _ in range(4))
    scores = (query.float() @ key.float().transpose(-1, -2)) * shape[-1] ** -0.5
    out = (torch.softmax(scores, dim=-1) @ value.float()).to(torch.{dtype})
    return {{"grad_output": grad_output, "query": query, "key": key, "value": value, "out": out,
            "lse": torch.logsumexp(scores, dim=-1)}}


def run(grad_output, query, key, value, out, lse):
    compute = torch.promote_types(query.dtype, torch.float32)
    scale = query.shape[-1] ** -0.5
    q, k, v, do = (t.to(compute) for t in (query, key, value, grad_output))
    probs = torch.exp(q @ k.transpose(-1, -2) * scale - lse.to(compute).unsqueeze(-1))
    # Like FlashAttention, P and dS are rounded to the input dtype before their matrix products.
    grad_value = probs.to(query.dtype).to(compute).transpose(-1, -2) @ do
    grad_probs = do @ v.transpose(-1, -2)
    delta = (do * out.to(compute)).sum(dim=-1, keepdim=True)
    grad_scores = (probs * (grad_probs - delta) * scale).to(query.dtype).to(compute)
    grad_query = grad_scores @ k
    grad_key = grad_scores.transpose(-1, -2) @ q
    return grad_query.to(query.dtype), grad_key.to(key.dtype), grad_value.to(value.dtype)
'''


def attention_backward(m, *, keys, heads: int, head_dim: int, dtype: str, what: str, sequences):
    m = uses(m, *keys)
    shape = ["batch_size", "num_heads", "seq_len", "head_dim"]
    return problem("L1", m, f"{slug(m)}_attention_backward_full_h{heads}d{head_dim}", "attention_backward",
              f"{m.name} {what}: FlashAttention-style backward of full (non-causal) attention with {heads} heads, "
              f"head_dim {head_dim}, scale 1/sqrt(head_dim): from grad_output, q, k, v and the forward's output and "
              f"log-sum-exp, the gradients of q, k and v; {dtype} tensors, fp32 lse and accumulation.",
              axes={"batch_size": var("Images"), "seq_len": var("Tokens per image"),
                    "num_heads": const(heads, "attention heads"), "head_dim": const(head_dim, "head_dim")},
              inputs={"grad_output": tensor(shape, dtype), "query": tensor(shape, dtype), "key": tensor(shape, dtype),
                      "value": tensor(shape, dtype), "out": tensor(shape, dtype),
                      "lse": tensor(shape[:3], "float32", "Row log-sum-exp of the scaled scores")},
              outputs={"grad_query": tensor(shape, dtype), "grad_key": tensor(shape, dtype),
                       "grad_value": tensor(shape, dtype)},
              reference=_ATTENTION_BACKWARD.format(dtype=dtype), workloads=pairs("batch_size", "seq_len", sequences),
              backward=True, custom_inputs_entrypoint="make_inputs")
