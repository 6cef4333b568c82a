"""DLRM-Bench: the recommender kernels of the MLPerf DLRM configurations, forward and training backward.

The set ``DLRM`` (``problems/DLRM/``) covers what a DLRM training or inference step spends its
time in outside vendor GEMM libraries, and the GEMM blocks around them, so `solbench reach` can
map a recommender's profile onto problems by ``op_type``:

- ``embedding_bag``: sum pooling over one table at its real hotness, and over all 26 tables at
  once as TorchRec/FBGEMM's fused table-batched lookup does;
- ``embedding_bag_backward``: the sparse gradient fused with the row-wise Adagrad update that
  MLPerf's TorchRec reference applies to the tables (``OptimType.EXACT_ROWWISE_ADAGRAD``);
- ``jagged_to_padded`` / ``padded_to_jagged``: KeyedJaggedTensor rows to a padded batch and back;
- ``feature_interaction`` (+ ``_backward``): DLRM v1's dot interaction (MLPerf v0.7-v2.1);
- ``dcn_cross`` (+ ``_backward``): DCNv2's cross network, low-rank as in MLPerf v3+ and full-rank;
- ``mlp`` (+ ``_backward``): the bottom (dense) and top (over) MLPs;
- ``dcn_interaction_top_mlp``: the interaction and top MLP fused, as an inference step runs them.

Sources (values copied from ../shared/model-configs.json; tests/suite/test_catalog.py checks them):

- DLRM-DCNv2, MLPerf Training v3+ "recommendation_v2": facebookresearch/dlrm torchrec_dlrm/README.MD
  at 090956ee (the MLPerf command line: 26 tables capped at 40M rows, embedding_dim 128, the
  multi-hot sizes of the synthetic multi-hot Criteo 1TB, dense arch 512-256-128, over arch
  1024-1024-512-256-1, 3 low-rank DCN layers of rank 512, global batch 65536, Adagrad lr 0.005).
- DLRM v1, MLPerf Training v0.7-v2.1: facebookresearch/dlrm bench/run_and_time.sh at 090956ee
  (bottom MLP 13-512-256-128, top 1024-1024-512-256-1, dot interaction, mini-batch 2048).

Table sizes: the published tables have up to 40,000,000 rows x 128 fp32 (20.5 GB each), which no
CPU workload can hold. Problems over a big table take its row count as a ``var`` axis, and each
description names the real size. Tables at or below the cap keep their published size. Lookups per
sample (hotness), widths and layer sizes are always the published ones.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem, batches of
1k-256k samples (per-GPU training batches of 8,192 up to whole global batches of 65,536 and beyond,
as inference servers batch), tables of 1M-10M rows per GPU (the 40M-row tables row-wise sharded),
the fused 26-table lookup capped at 16k-1M rows per table; ``workload.cpu.jsonl`` the recipes'
small ones (the largest a few tens of MB).
"""

from __future__ import annotations

from typing import Any

from suite_recipes.builder import const, expr, problem, scalar, tensor, uses, var
from suite_recipes.shapes import grid
from suite_recipes.models import model
from suite_recipes.sweeps import with_gpu_tier
from suite_recipes.snippets import DLRM_INTERACT
from solbench.suite.draft import ModelRef, ProblemDraft

DLRM_DCNV2 = model("DLRM-DCNv2 (MLPerf Training v3+ recommendation, Criteo 1TB multi-hot)", None, "recommender", {
    "num_dense_features": 13, "num_sparse_features": 26, "embedding_dim": 128,
    "num_embeddings_per_feature": [40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956,
                                   405282, 10, 2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000, 590152,
                                   12973, 108, 36],
    "multi_hot_sizes": [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1],
    "dense_arch_layer_sizes": [512, 256, 128], "over_arch_layer_sizes": [1024, 1024, 512, 256, 1],
    "interaction_type": "dcn", "dcn_num_layers": 3, "dcn_low_rank_dim": 512, "global_batch_size": 65536,
    "optimizer": "adagrad", "learning_rate": 0.005})
DLRM_V1 = model("DLRM (MLPerf Training v0.7-v2.1 reference, Criteo Terabyte, dot interaction)", None,
                "recommender", {"num_dense_features": 13, "num_sparse_features": 26, "arch_sparse_feature_size": 128,
                                "arch_mlp_bot": [13, 512, 256, 128], "arch_mlp_top": [1024, 1024, 512, 256, 1],
                                "interaction": "dot", "mini_batch_size": 2048})

# Short names of the two models, kept after the full ``model:`` tag (which names the model-configs.json
# record): the names the reach layer and the issue use for them.
_ALIASES = {DLRM_DCNV2.name: ["model:dlrm-dcnv2", "domain:recsys"], DLRM_V1.name: ["model:dlrm-v1", "domain:recsys"]}

_FEATURE = 20
"""The heaviest lookup feature: multi_hot_sizes[20] = 100 ids per sample into a 40M-row table."""
_FBGEMM_EPS = 1e-8
"""FBGEMM's default eps of the row-wise Adagrad update (TorchRec's fused_params do not set one)."""

_HEADER = "import torch\nimport torch.nn.functional as F\n\n\n"
"""What every DLRM reference imports."""

_PER_GPU = ("Per-GPU batches: global_batch_size 65536 over 8 GPUs is 8192 samples each; the CPU workloads "
            "stop lower (at about 3 GFLOP per call) and keep the shape class")




def _batches(values) -> list[dict[str, int]]:
    return [{"batch_size": v} for v in values]


# --- embedding bags --------------------------------------------------------------------------------------

_EMBEDDING_BAG = '''def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    weight = torch.randn(a["num_embeddings"], a["embedding_dim"], device=device) * 0.1
    indices = torch.randint(0, a["num_embeddings"], (a["batch_size"], a["hotness"]), device=device)
    return {"indices": indices, "weight": weight}


@torch.no_grad()
def run(indices, weight):
    """F.embedding_bag(indices, weight, mode="sum"), written as a gather and a sum over the bag."""
    return F.embedding(indices, weight).sum(dim=1)
'''


def embedding_bag(m: ModelRef) -> ProblemDraft:
    m = uses(m, "embedding_dim", "num_embeddings_per_feature", "multi_hot_sizes", "global_batch_size")
    rows, hot, dim = (m.config["num_embeddings_per_feature"][_FEATURE], m.config["multi_hot_sizes"][_FEATURE],
                      m.config["embedding_dim"])
    return problem(
        "DLRM", m, f"dlrm-dcnv2_embedding_bag_sum_t{_FEATURE}_h{hot}", "embedding_bag",
        f"{m.name} sparse feature {_FEATURE}, the heaviest lookup: EmbeddingBag(mode='sum') with "
        f"multi_hot_sizes[{_FEATURE}] = {hot} ids per sample into a table of embedding_dim {dim} fp32 rows. The "
        f"real table has num_embeddings_per_feature[{_FEATURE}] = {rows:,} rows ({rows * dim * 4 / 1e9:.1f} GB); "
        f"num_embeddings is a workload axis and the CPU workloads use 4,096-65,536 rows with uniformly random "
        f"ids. {_PER_GPU}.",
        axes={"batch_size": var("Samples"), "hotness": const(hot, f"multi_hot_sizes[{_FEATURE}]"),
              "num_embeddings": var(f"Table rows (published: {rows})"),
              "embedding_dim": const(dim, "embedding_dim")},
        inputs={"indices": tensor(["batch_size", "hotness"], "int64", "Row ids in [0, num_embeddings)"),
                "weight": tensor(["num_embeddings", "embedding_dim"], "float32")},
        outputs={"pooled": tensor(["batch_size", "embedding_dim"], "float32")},
        reference=_HEADER + _EMBEDDING_BAG,
        workloads=grid(batch_size=(1, 16, 64, 128, 256, 333, 512, 1024),
                       num_embeddings=(4096, 8192, 16384, 65536, 32768, 65536, 65536, 32768)),
                       tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


def _capped_total(rows: list[int], cap: int) -> int:
    return sum(min(r, cap) for r in rows)


_FUSED_EMBEDDING_BAG = '''HOTNESS = @HOTNESS@
ROWS = @ROWS@


def _table_rows(total_rows):
    """Each table keeps its published size up to a cap; the cap is the one that gives total_rows rows."""
    low, high = 1, max(ROWS)
    while low < high:
        cap = (low + high) // 2
        if sum(min(r, cap) for r in ROWS) < total_rows:
            low = cap + 1
        else:
            high = cap
    return [min(r, low) for r in ROWS]


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    rows = _table_rows(a["total_rows"])
    assert sum(rows) == a["total_rows"], "total_rows is not a capped sum of the published table sizes"
    offsets = [0]
    for r in rows:
        offsets.append(offsets[-1] + r)
    batch = a["batch_size"]
    values = torch.cat([torch.randint(0, r, (batch * h,), device=device) for r, h in zip(rows, HOTNESS)])
    weights = torch.randn(a["total_rows"], a["embedding_dim"], device=device) * 0.1
    return {"values": values, "table_offsets": torch.tensor(offsets, dtype=torch.int64, device=device),
            "weights": weights}


@torch.no_grad()
def run(values, table_offsets, weights):
    batch = values.shape[0] // sum(HOTNESS)
    pooled, start = [], 0
    for table, hot in enumerate(HOTNESS):
        ids = values[start:start + batch * hot].view(batch, hot) + table_offsets[table]
        pooled.append(F.embedding(ids, weights).sum(dim=1))  # F.embedding_bag(ids, weights, mode="sum")
        start += batch * hot
    return torch.stack(pooled, dim=1)
'''


def fused_embedding_bags(m: ModelRef) -> ProblemDraft:
    m = uses(m, "embedding_dim", "num_sparse_features", "num_embeddings_per_feature", "multi_hot_sizes",
             "global_batch_size")
    rows, hot, dim = m.config["num_embeddings_per_feature"], m.config["multi_hot_sizes"], m.config["embedding_dim"]
    tables, ids = m.config["num_sparse_features"], sum(m.config["multi_hot_sizes"])
    caps = (2048, 2048, 4096, 4096, 8192, 4096, 8192, 2048)
    reference = (_FUSED_EMBEDDING_BAG.replace("@HOTNESS@", repr(list(hot))).replace("@ROWS@", repr(list(rows))))
    return problem(
        "DLRM", m, f"dlrm-dcnv2_fused_embedding_bags_{tables}t_d{dim}", "embedding_bag",
        f"{m.name}, all num_sparse_features {tables} tables in one call, as TorchRec's EmbeddingBagCollection "
        f"runs FBGEMM's table-batched lookup: sum pooling with the multi_hot_sizes {hot} ids per sample "
        f"({ids} lookups per sample), embedding_dim {dim}, fp32. The tables are stacked in one weight matrix; "
        "table_offsets[t] is table t's first row and values holds the ids feature-major (KeyedJaggedTensor order: "
        "all of feature 0's ids, sample by sample, then feature 1's ...), each local to its table. Output "
        "[batch, tables, dim], the layout the interaction consumes. Published table sizes "
        "(num_embeddings_per_feature) reach 40,000,000 rows; the CPU workloads cap every table at 2,048-8,192 "
        f"rows (total_rows; smaller tables keep their real size). {_PER_GPU}.",
        axes={"batch_size": var("Samples"), "num_ids": expr(f"batch_size * {ids}", "sum(multi_hot_sizes) ids per "
                                                            "sample"),
              "num_tables": const(tables, "num_sparse_features"),
              "num_offsets": const(tables + 1, "num_sparse_features + 1"),
              "total_rows": var("Rows of all tables, each capped (published sizes sum to 247 million)"),
              "embedding_dim": const(dim, "embedding_dim")},
        inputs={"values": tensor(["num_ids"], "int64", "Ids local to their table, feature-major"),
                "table_offsets": tensor(["num_offsets"], "int64", "First row of each table; last = total_rows"),
                "weights": tensor(["total_rows", "embedding_dim"], "float32", "The tables stacked")},
        outputs={"pooled": tensor(["batch_size", "num_tables", "embedding_dim"], "float32")},
        reference=_HEADER + reference,
        workloads=grid(batch_size=(1, 16, 64, 128, 200, 256, 333, 512),
                       total_rows=tuple(_capped_total(rows, c) for c in caps)),
                       tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


_EMBEDDING_BAG_ADAGRAD = '''def make_inputs(axes_and_scalars, device):
    """The optimizer state of a table that has trained a while: positive, of the order of a squared gradient."""
    a = axes_and_scalars
    rows, dim = a["num_embeddings"], a["embedding_dim"]
    return {"indices": torch.randint(0, rows, (a["batch_size"], a["hotness"]), device=device),
            "grad_pooled": torch.randn(a["batch_size"], dim, device=device),
            "weight": torch.randn(rows, dim, device=device) * 0.1,
            "momentum": torch.rand(rows, device=device) + 0.5}


@torch.no_grad()
def run(indices, grad_pooled, weight, momentum, learning_rate, eps):
    """EXACT_ROWWISE_ADAGRAD: the gradient of each touched row is summed over all its occurrences first
    (duplicates within and across samples), then one update per row:
    state += mean(g^2); w -= lr * g / (sqrt(state) + eps). Untouched rows (g = 0) keep both.
    Returns the written rows only: for each lookup, its row and state after the update (a row looked up
    twice appears twice, with the same values), not the whole table."""
    batch, hot = indices.shape
    dim = grad_pooled.shape[1]
    ids = indices.reshape(-1)
    grads = grad_pooled.unsqueeze(1).expand(-1, hot, -1).reshape(-1, dim)
    grad_rows = torch.zeros_like(weight).index_add_(0, ids, grads)[ids]   # each lookup's row gradient, summed
    new_state = momentum[ids] + grad_rows.pow(2).mean(dim=1)
    new_rows = weight[ids] - learning_rate * grad_rows / (new_state.sqrt() + eps).unsqueeze(1)
    return new_rows.reshape(batch, hot, dim), new_state.reshape(batch, hot)
'''


def embedding_bag_adagrad(m: ModelRef) -> ProblemDraft:
    m = uses(m, "embedding_dim", "num_embeddings_per_feature", "multi_hot_sizes", "optimizer", "learning_rate")
    rows, hot, dim = (m.config["num_embeddings_per_feature"][_FEATURE], m.config["multi_hot_sizes"][_FEATURE],
                      m.config["embedding_dim"])
    return problem(
        "DLRM", m, f"dlrm-dcnv2_embedding_bag_backward_rowwise_adagrad_t{_FEATURE}_h{hot}", "embedding_bag_backward",
        f"Backward of {m.name} sparse feature {_FEATURE}'s sum-pooled EmbeddingBag (multi_hot_sizes[{_FEATURE}] = "
        f"{hot} ids per sample, embedding_dim {dim}) fused with the optimizer step, as FBGEMM's table-batched "
        "backward runs it in MLPerf's TorchRec reference (optimizer adagrad, fused as EXACT_ROWWISE_ADAGRAD): "
        "each id's gradient is its sample's grad_pooled; gradients of repeated rows are summed, then each "
        "touched row's state grows by the mean of its squared gradient and the row moves by "
        f"-learning_rate * g / (sqrt(state) + eps), learning_rate {m.config['learning_rate']}, eps {_FBGEMM_EPS} "
        "(FBGEMM's default). Returns the rows the step writes, not the table: for each lookup (sample, slot), "
        "its row and its state after the update (every element must match; a row looked up twice appears twice "
        "with the same values). The optimizer updates the touched rows in place; returning the whole table "
        f"would time a copy of it. The real table has {rows:,} rows; the CPU workloads use 4,096-32,768. fp32.",
        axes={"batch_size": var("Samples"), "hotness": const(hot, f"multi_hot_sizes[{_FEATURE}]"),
              "num_embeddings": var(f"Table rows (published: {rows})"),
              "embedding_dim": const(dim, "embedding_dim")},
        inputs={"indices": tensor(["batch_size", "hotness"], "int64", "Row ids in [0, num_embeddings)"),
                "grad_pooled": tensor(["batch_size", "embedding_dim"], "float32", "Gradient of the pooled output"),
                "weight": tensor(["num_embeddings", "embedding_dim"], "float32"),
                "momentum": tensor(["num_embeddings"], "float32", "Row-wise Adagrad state (sum of mean g^2)"),
                "learning_rate": scalar("float32"), "eps": scalar("float32")},
        outputs={"updated_rows": tensor(["batch_size", "hotness", "embedding_dim"], "float32",
                                        "weight[indices[b, j]] after the step"),
                 "updated_state": tensor(["batch_size", "hotness"], "float32", "momentum[indices[b, j]] after the step")},
        reference=_HEADER + _EMBEDDING_BAG_ADAGRAD, backward=True, matched_ratio=1.0,
        scalars={"learning_rate": m.config["learning_rate"], "eps": _FBGEMM_EPS},
        workloads=grid(batch_size=(1, 16, 64, 128, 256, 333, 512, 1024),
                       num_embeddings=(4096, 8192, 16384, 32768, 16384, 32768, 32768, 16384)),
                       tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


# --- jagged <-> padded ------------------------------------------------------------------------------------

_JAGGED_INPUTS = '''def _lengths(batch, total, max_len, device):
    """Random lengths in [0, max_len] that sum to total: total distinct slots of the padded batch."""
    slots = torch.randperm(batch * max_len, device=device)[:total]
    return torch.bincount(slots // max_len, minlength=batch).to(torch.int64)


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    batch, total, max_len, dim = a["batch_size"], a["total_values"], a["max_len"], a["embedding_dim"]
    lengths = _lengths(batch, total, max_len, device)
    return {@INPUTS@, "lengths": lengths}


'''
_JAGGED_TO_PADDED = _JAGGED_INPUTS.replace(
    "@INPUTS@", '"values": torch.randn(total, dim, device=device)') + '''@torch.no_grad()
def run(values, lengths):
    """fbgemm's jagged_to_padded_dense with padding_value 0: sample b's rows fill out[b, :lengths[b]]."""
    slots = torch.arange(@MAX_LEN@, device=values.device)
    mask = slots.unsqueeze(0) < lengths.unsqueeze(1)
    out = values.new_zeros(lengths.shape[0], @MAX_LEN@, values.shape[1])
    out[mask] = values
    return out
'''
_PADDED_TO_JAGGED = _JAGGED_INPUTS.replace(
    "@INPUTS@", '"padded": torch.randn(batch, max_len, dim, device=device)') + '''@torch.no_grad()
def run(padded, lengths):
    """fbgemm's dense_to_jagged: the first lengths[b] rows of each sample, concatenated in sample order.
    Gathered by (sample, slot) index pairs built from the lengths, so the output's size comes from the
    small lengths tensor, not from a [batch, max_len] mask."""
    total = int(lengths.sum())
    starts = torch.cumsum(lengths, 0) - lengths
    sample = torch.repeat_interleave(torch.arange(lengths.shape[0], device=padded.device), lengths,
                                     output_size=total)
    slot = torch.arange(total, device=padded.device) - starts[sample]
    return padded[sample, slot]
'''
_JAGGED_WORKLOADS = grid(batch_size=(2, 16, 64, 128, 256, 333, 512, 1024),
                         total_values=(37, 800, 6400, 3000, 12800, 33300, 20000, 40000))


def _jagged_axes(m: ModelRef, max_len: int, dim: int) -> dict:
    return {"batch_size": var("Samples"), "total_values": var("Rows of all samples (sum of lengths)"),
            "max_len": const(max_len, f"multi_hot_sizes[{_FEATURE}]"), "embedding_dim": const(dim, "embedding_dim")}


def jagged_to_padded(m: ModelRef) -> ProblemDraft:
    m = uses(m, "embedding_dim", "multi_hot_sizes")
    max_len, dim = m.config["multi_hot_sizes"][_FEATURE], m.config["embedding_dim"]
    return problem(
        "DLRM", m, f"dlrm-dcnv2_jagged_to_padded_l{max_len}_d{dim}", "jagged_to_padded",
        f"{m.name}: jagged embedding rows of a multi-hot feature (a KeyedJaggedTensor's values, one "
        f"embedding_dim {dim} fp32 row per id, with per-sample lengths) to a dense [batch, max_len, {dim}] "
        f"batch padded with zeros, max_len = multi_hot_sizes[{_FEATURE}] = {max_len} (fbgemm "
        "jagged_to_padded_dense). Lengths vary from 0 to max_len; the data are moved, not computed, so every "
        "element must match.",
        axes=_jagged_axes(m, max_len, dim),
        inputs={"values": tensor(["total_values", "embedding_dim"], "float32", "Rows of all samples, in order"),
                "lengths": tensor(["batch_size"], "int64", "Rows per sample, in [0, max_len], sum total_values")},
        outputs={"padded": tensor(["batch_size", "max_len", "embedding_dim"], "float32")},
        reference=_HEADER + _JAGGED_TO_PADDED.replace("@MAX_LEN@", str(max_len)), matched_ratio=1.0,
        workloads=_JAGGED_WORKLOADS, tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


def padded_to_jagged(m: ModelRef) -> ProblemDraft:
    m = uses(m, "embedding_dim", "multi_hot_sizes")
    max_len, dim = m.config["multi_hot_sizes"][_FEATURE], m.config["embedding_dim"]
    return problem(
        "DLRM", m, f"dlrm-dcnv2_padded_to_jagged_l{max_len}_d{dim}", "padded_to_jagged",
        f"{m.name}: a padded [batch, max_len, {dim}] fp32 batch back to jagged rows (fbgemm dense_to_jagged, "
        "also the backward of jagged_to_padded): the first lengths[b] rows of each sample, concatenated; "
        f"max_len = multi_hot_sizes[{_FEATURE}] = {max_len}, embedding_dim {dim}. Every element must match.",
        axes=_jagged_axes(m, max_len, dim),
        inputs={"padded": tensor(["batch_size", "max_len", "embedding_dim"], "float32"),
                "lengths": tensor(["batch_size"], "int64", "Rows per sample, in [0, max_len], sum total_values")},
        outputs={"values": tensor(["total_values", "embedding_dim"], "float32")},
        reference=_HEADER + _PADDED_TO_JAGGED, matched_ratio=1.0, workloads=_JAGGED_WORKLOADS,
        tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


# --- DLRM v1 dot interaction -------------------------------------------------------------------------------

_DOT = DLRM_INTERACT + '''

def make_inputs(axes_and_scalars, device):
    """dense is the bottom MLP's ReLU output, sparse the pooled embeddings."""
    a = axes_and_scalars
    out = {"dense": torch.relu(torch.randn(a["batch_size"], a["dim"], device=device)),
           "sparse": torch.randn(a["batch_size"], a["num_sparse"], a["dim"], device=device) * 0.3}
@EXTRA@    return out


'''
_DOT_FORWARD = _DOT.replace("@EXTRA@", "") + '''@torch.no_grad()
def run(dense, sparse):
    return _interact(dense, sparse)
'''
_DOT_GRAD_INPUT = '    out["grad_output"] = torch.randn(a["batch_size"], a["out_dim"], device=device)\n'
_DOT_BACKWARD = _DOT.replace("@EXTRA@", _DOT_GRAD_INPUT) + '''def run(dense, sparse, grad_output):
    with torch.enable_grad():
        leaves = [dense.detach().requires_grad_(), sparse.detach().requires_grad_()]
        return torch.autograd.grad(_interact(*leaves), leaves, grad_output)
'''


def dot_interaction(m: ModelRef, *, backward: bool = False) -> ProblemDraft:
    m = uses(m, "num_sparse_features", "arch_sparse_feature_size", "interaction", "mini_batch_size")
    sparse, dim = m.config["num_sparse_features"], m.config["arch_sparse_feature_size"]
    count = sparse + 1
    out = dim + count * (count - 1) // 2
    what = (f"{m.name} dot interaction: the bottom-MLP output and the num_sparse_features {sparse} pooled "
            f"embeddings (arch_sparse_feature_size {dim}) stacked, all pairwise dot products (bmm), the strictly "
            f"lower triangle ({count * (count - 1) // 2} pairs, dlrm_s_pytorch's li/lj order) concatenated after "
            f"the bottom-MLP output: {out} values per sample; fp32; batches up to mini_batch_size "
            f"{m.config['mini_batch_size']}.")
    axes = {"batch_size": var("Samples"), "num_sparse": const(sparse, "num_sparse_features"),
            "dim": const(dim, "arch_sparse_feature_size"), "out_dim": const(out, "dim + (features choose 2)")}
    inputs = {"dense": tensor(["batch_size", "dim"], "float32", "Bottom-MLP output"),
              "sparse": tensor(["batch_size", "num_sparse", "dim"], "float32", "Pooled embeddings")}
    workloads = _batches((1, 16, 128, 333, 512, 1000, 1024, 2048))
    if backward:
        return problem(
            "DLRM", m, f"dlrm-v1_dot_interaction_backward_f{count}_d{dim}", "feature_interaction_backward",
            "Backward of the " + what + " Returns the gradients of the bottom-MLP output and of the pooled "
            "embeddings (the embedding backward's input) given the gradient of the interaction output.",
            axes=axes, inputs={**inputs, "grad_output": tensor(["batch_size", "out_dim"], "float32")},
            outputs={"grad_dense": tensor(["batch_size", "dim"], "float32"),
                     "grad_sparse": tensor(["batch_size", "num_sparse", "dim"], "float32")},
            reference=_HEADER + _DOT_BACKWARD, backward=True, workloads=workloads,
            tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")
    return problem("DLRM", m, f"dlrm-v1_dot_interaction_f{count}_d{dim}", "feature_interaction", what, axes=axes,
                    inputs=inputs, outputs={"interaction": tensor(["batch_size", "out_dim"], "float32")},
                    reference=_HEADER + _DOT_FORWARD, workloads=workloads,
                    tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


# --- DCNv2 cross network -----------------------------------------------------------------------------------

_DCN_INPUTS = '''def make_inputs(axes_and_scalars, device):
    """Weights at their initial scale: each projection keeps unit-order activations through the layers."""
    a = axes_and_scalars
    batch, width = a["batch_size"], a["width"]
    out = {}
    if "num_sparse" in a:
        out["dense"] = torch.relu(torch.randn(batch, a["dim"], device=device))
        out["sparse"] = torch.randn(batch, a["num_sparse"], a["dim"], device=device) * 0.5
    else:
        out["x0"] = torch.randn(batch, width, device=device) * 0.5
    if "rank" in a:
        layers, rank = a["num_layers"], a["rank"]
        out["v_kernels"] = torch.randn(layers, rank, width, device=device) * width ** -0.5
        out["w_kernels"] = torch.randn(layers, width, rank, device=device) * (0.5 * rank ** -0.5)
        out["bias"] = torch.randn(layers, width, device=device) * 0.1
    else:
        out["weight"] = torch.randn(width, width, device=device) * (0.5 * width ** -0.5)
        out["bias"] = torch.randn(width, device=device) * 0.1
    top_sizes = @TOP@
    for index, size in enumerate(top_sizes):
        fan_in = width if index == 0 else top_sizes[index - 1]
        out[f"top_w{index}"] = torch.randn(size, fan_in, device=device) * (2.0 / fan_in) ** 0.5
        out[f"top_b{index}"] = torch.randn(size, device=device) * 0.1
@EXTRA@    return out


def _low_rank_cross(x0, v_kernels, w_kernels, bias):
    """TorchRec LowRankCrossNet: x_{l+1} = x_0 * (W_l (V_l x_l) + b_l) + x_l."""
    x = x0
    for layer in range(v_kernels.shape[0]):
        x = x0 * F.linear(F.linear(x, v_kernels[layer]), w_kernels[layer], bias[layer]) + x
    return x


'''
_DCN_LOW_RANK = '''@torch.no_grad()
def run(dense, sparse, v_kernels, w_kernels, bias):
    x0 = torch.cat((dense.unsqueeze(1), sparse), dim=1).flatten(1)
    return _low_rank_cross(x0, v_kernels, w_kernels, bias)
'''
_DCN_FULL_RANK = '''@torch.no_grad()
def run(x0, weight, bias):
    """TorchRec CrossNet, one layer: x_1 = x_0 * (W x_0 + b) + x_0."""
    return x0 * F.linear(x0, weight, bias) + x0
'''
_DCN_BACKWARD = '''def run(x0, v_kernels, w_kernels, bias, grad_output):
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (x0, v_kernels, w_kernels, bias)]
        return torch.autograd.grad(_low_rank_cross(*leaves), leaves, grad_output)
'''


def _dcn_reference(body: str, *, top=(), grad: bool = False) -> str:
    extra = '    out["grad_output"] = torch.randn(batch, width, device=device)\n' if grad else ""
    return _DCN_INPUTS.replace("@TOP@", repr(tuple(top))).replace("@EXTRA@", extra) + body


def _dcn_axes(m: ModelRef, *, split_input: bool, low_rank: bool = True) -> dict:
    tables, dim = m.config["num_sparse_features"], m.config["embedding_dim"]
    axes = {"batch_size": var("Samples"), "width": const((tables + 1) * dim, "(num_sparse_features + 1) * "
                                                         "embedding_dim")}
    if split_input:
        axes.update({"num_sparse": const(tables, "num_sparse_features"), "dim": const(dim, "embedding_dim")})
    if low_rank:
        axes.update({"num_layers": const(m.config["dcn_num_layers"], "dcn_num_layers"),
                     "rank": const(m.config["dcn_low_rank_dim"], "dcn_low_rank_dim")})
    return axes


_DCN_KEYS = ("embedding_dim", "num_sparse_features", "interaction_type", "dcn_num_layers", "dcn_low_rank_dim")


def _low_rank_inputs() -> dict:
    return {"v_kernels": tensor(["num_layers", "rank", "width"], "float32", "V_l, projecting down to rank"),
            "w_kernels": tensor(["num_layers", "width", "rank"], "float32", "W_l, projecting back up"),
            "bias": tensor(["num_layers", "width"], "float32")}


def dcn_low_rank(m: ModelRef) -> ProblemDraft:
    m = uses(m, *_DCN_KEYS, "global_batch_size")
    tables, dim, layers, rank = (m.config["num_sparse_features"], m.config["embedding_dim"],
                                 m.config["dcn_num_layers"], m.config["dcn_low_rank_dim"])
    width = (tables + 1) * dim
    return problem(
        "DLRM", m, f"dlrm-dcnv2_low_rank_cross_net_l{layers}_r{rank}_w{width}", "dcn_cross",
        f"{m.name} interaction (InteractionDCNArch): the bottom-MLP output and the {tables} pooled embeddings "
        f"(embedding_dim {dim}) concatenated to x_0 of width {width}, then dcn_num_layers {layers} low-rank "
        f"cross layers (TorchRec LowRankCrossNet, dcn_low_rank_dim {rank}): x_(l+1) = x_0 * (W_l (V_l x_l) + b_l) "
        f"+ x_l. fp32. {_PER_GPU}.",
        axes=_dcn_axes(m, split_input=True),
        inputs={"dense": tensor(["batch_size", "dim"], "float32", "Bottom-MLP output"),
                "sparse": tensor(["batch_size", "num_sparse", "dim"], "float32", "Pooled embeddings"),
                **_low_rank_inputs()},
        outputs={"output": tensor(["batch_size", "width"], "float32")},
        reference=_HEADER + _dcn_reference(_DCN_LOW_RANK), workloads=_batches((1, 4, 16, 32, 48, 64, 100, 128)),
        tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


def dcn_full_rank(m: ModelRef) -> ProblemDraft:
    m = uses(m, "embedding_dim", "num_sparse_features", "interaction_type")
    tables, dim = m.config["num_sparse_features"], m.config["embedding_dim"]
    width = (tables + 1) * dim
    return problem(
        "DLRM", m, f"dlrm-dcnv2_full_rank_cross_layer_w{width}", "dcn_cross",
        f"One full-rank DCNv2 cross layer (TorchRec CrossNet, the DCN-v2 paper's layer without the low-rank "
        f"factorisation MLPerf uses) at the width of the {m.name} interaction: x_0 of width {width} "
        f"((num_sparse_features {tables} + 1) x embedding_dim {dim}), x_1 = x_0 * (W x_0 + b) + x_0 with W "
        f"{width} x {width}. fp32.",
        axes=_dcn_axes(m, split_input=False, low_rank=False),
        inputs={"x0": tensor(["batch_size", "width"], "float32"),
                "weight": tensor(["width", "width"], "float32"), "bias": tensor(["width"], "float32")},
        outputs={"output": tensor(["batch_size", "width"], "float32")},
        reference=_HEADER + _dcn_reference(_DCN_FULL_RANK), workloads=_batches((1, 4, 8, 16, 32, 64, 100, 128)),
        tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


def dcn_low_rank_backward(m: ModelRef) -> ProblemDraft:
    m = uses(m, *_DCN_KEYS, "global_batch_size")
    tables, dim, layers, rank = (m.config["num_sparse_features"], m.config["embedding_dim"],
                                 m.config["dcn_num_layers"], m.config["dcn_low_rank_dim"])
    width = (tables + 1) * dim
    axes = _dcn_axes(m, split_input=False)
    return problem(
        "DLRM", m, f"dlrm-dcnv2_low_rank_cross_net_backward_l{layers}_r{rank}_w{width}", "dcn_cross_backward",
        f"Backward of the {m.name} low-rank cross network (dcn_num_layers {layers}, dcn_low_rank_dim {rank}, "
        f"width {width} = (num_sparse_features + 1) x embedding_dim): x_(l+1) = x_0 * (W_l (V_l x_l) + b_l) + "
        "x_l. Returns the gradients of x_0 (split into the bottom-MLP output and the pooled embeddings' "
        "gradients by the caller) and of every V_l, W_l, b_l given grad_output, as a training step does "
        f"(activations recomputed). fp32. {_PER_GPU}.",
        axes=axes,
        inputs={"x0": tensor(["batch_size", "width"], "float32", "The concatenated interaction input"),
                **_low_rank_inputs(), "grad_output": tensor(["batch_size", "width"], "float32")},
        outputs={"grad_x0": tensor(["batch_size", "width"], "float32"),
                 "grad_v_kernels": tensor(["num_layers", "rank", "width"], "float32"),
                 "grad_w_kernels": tensor(["num_layers", "width", "rank"], "float32"),
                 "grad_bias": tensor(["num_layers", "width"], "float32")},
        reference=_HEADER + _dcn_reference(_DCN_BACKWARD, grad=True), backward=True,
        workloads=_batches((1, 2, 4, 8, 16, 32, 48, 64)), tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


# --- MLPs ------------------------------------------------------------------------------------------------

_MLP = '''SIZES = @SIZES@
LAST_RELU = @LAST_RELU@


def make_inputs(axes_and_scalars, device):
    """Kaiming-scaled weights (std sqrt(2 / fan_in)), as ReLU MLPs are initialised."""
    a = axes_and_scalars
    out = {"x": @X@}
    for index in range(len(SIZES) - 1):
        out[f"w{index}"] = torch.randn(SIZES[index + 1], SIZES[index], device=device) * (2.0 / SIZES[index]) ** 0.5
        out[f"b{index}"] = torch.randn(SIZES[index + 1], device=device) * 0.1
@EXTRA@    return out


def _mlp(x, params):
    layers = len(params) // 2
    for index in range(layers):
        x = F.linear(x, params[2 * index], params[2 * index + 1])
        if index < layers - 1 or LAST_RELU:
            x = torch.relu(x)
    return x


'''
_MLP_FORWARD = '''@torch.no_grad()
def run(x, @PARAMS@):
    return _mlp(x, [@PARAMS@])
'''
_MLP_BACKWARD = '''def run(x, @PARAMS@, grad_output):
@LAST_BIAS@    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (@GRADS@)]
        out = _mlp(@X_LEAF@, leaves@PARAM_SLICE@)
        return torch.autograd.grad(out, leaves, grad_output)
'''


def _mlp_extra_inputs(backward: bool, last_relu: bool) -> str:
    lines = []
    if backward and not last_relu:
        lines.append('    del out[f"b{len(SIZES) - 2}"]  # changes no gradient: not an input')
    if backward:
        lines.append('    out["grad_output"] = torch.randn(a["batch_size"], SIZES[-1], device=device)')
    return "".join(line + "\n" for line in lines)


def _mlp_problem(m: ModelRef, name: str, op_type: str, description: str, sizes: list[int], *, last_relu: bool,
                 x_source: str, x_description: str, workloads, backward: bool, input_grad: bool) -> ProblemDraft:
    layers = len(sizes) - 1
    params = [f"{kind}{i}" for i in range(layers) for kind in ("w", "b")]
    axes: dict[str, Any] = {"batch_size": var("Samples")}
    dims = [f"size_{i}" for i in range(len(sizes))]
    for index, size in enumerate(sizes):
        axes[dims[index]] = const(size, "input width" if index == 0 else f"layer {index} width")
    inputs = {"x": tensor(["batch_size", dims[0]], "float32", x_description)}
    for i in range(layers):
        inputs[f"w{i}"] = tensor([dims[i + 1], dims[i]], "float32")
        inputs[f"b{i}"] = tensor([dims[i + 1]], "float32")
    reference = (_MLP.replace("@SIZES@", repr(list(sizes))).replace("@LAST_RELU@", repr(last_relu))
                 .replace("@X@", x_source).replace("@EXTRA@", _mlp_extra_inputs(backward, last_relu)))
    joined = ", ".join(params)
    if not backward:
        reference += _MLP_FORWARD.replace("@PARAMS@", joined)
        outputs = {"output": tensor(["batch_size", dims[-1]], "float32")}
    else:
        inputs["grad_output"] = tensor(["batch_size", dims[-1]], "float32")
        grads = (["x"] if input_grad else []) + params
        last_bias, last_weight = params[-1], params[-2]
        if last_relu:
            last_bias_line = ""
        else:  # the last bias changes no gradient (no ReLU after it): not an input; its gradient is still returned
            del inputs[last_bias]
            joined = ", ".join(params[:-1])
            last_bias_line = f"    {last_bias} = {last_weight}.new_zeros({last_weight}.shape[0])\n"
        reference += (_MLP_BACKWARD.replace("@PARAMS@", joined).replace("@GRADS@", ", ".join(grads))
                      .replace("@LAST_BIAS@", last_bias_line)
                      .replace("@X_LEAF@", "leaves[0]" if input_grad else "x")
                      .replace("@PARAM_SLICE@", "[1:]" if input_grad else ""))
        shapes = {"x": ["batch_size", dims[0]], **{f"w{i}": [dims[i + 1], dims[i]] for i in range(layers)},
                  **{f"b{i}": [dims[i + 1]] for i in range(layers)}}
        outputs = {f"grad_{n}": tensor(shapes[n], "float32") for n in grads}
    return problem("DLRM", m, name, op_type, description, axes=axes, inputs=inputs, outputs=outputs,
        reference=_HEADER + reference,
                    workloads=workloads, backward=backward,
                    tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


def bottom_mlp(m: ModelRef, *, backward: bool = False) -> ProblemDraft:
    m = uses(m, "num_dense_features", "dense_arch_layer_sizes", "global_batch_size")
    sizes = [m.config["num_dense_features"], *m.config["dense_arch_layer_sizes"]]
    text = "-".join(map(str, sizes))
    what = (f"{m.name} bottom MLP (TorchRec DenseArch): num_dense_features {m.config['num_dense_features']} "
            f"dense features through Linear+ReLU layers dense_arch_layer_sizes {text} (ReLU after every layer), "
            f"fp32. {_PER_GPU}.")
    workloads = _batches((1, 16, 128, 512, 1000, 2048, 3000, 4096))
    x_source = 'torch.log1p(torch.rand(a["batch_size"], SIZES[0], device=device) * 100.0)'
    x_description = "Dense features, log(1 + x) transformed as in the Criteo preprocessing"
    if backward:
        return _mlp_problem(
            m, f"dlrm-dcnv2_bottom_mlp_backward_{text}", "mlp_backward",
            "Backward of the " + what + " Returns the weight and bias gradients (the dense features need none) "
            "given the gradient of the output, as a training step does (activations recomputed).",
            sizes, last_relu=True, x_source=x_source, x_description=x_description, workloads=workloads,
            backward=True, input_grad=False)
    return _mlp_problem(m, f"dlrm-dcnv2_bottom_mlp_{text}", "mlp", what, sizes, last_relu=True,
                        x_source=x_source, x_description=x_description, workloads=workloads, backward=False,
                        input_grad=False)


def top_mlp(m: ModelRef, *, backward: bool = False) -> ProblemDraft:
    m = uses(m, "num_sparse_features", "embedding_dim", "over_arch_layer_sizes", "global_batch_size")
    width = (m.config["num_sparse_features"] + 1) * m.config["embedding_dim"]
    sizes = [width, *m.config["over_arch_layer_sizes"]]
    text = "-".join(map(str, sizes))
    what = (f"{m.name} top MLP (TorchRec OverArch): the DCN output of width {width} ((num_sparse_features + 1) "
            f"x embedding_dim) through over_arch_layer_sizes {text}, ReLU after every layer but the last, which "
            f"gives the click logit. fp32. {_PER_GPU}.")
    x_source = 'torch.randn(a["batch_size"], SIZES[0], device=device)'
    if backward:
        return _mlp_problem(
            m, f"dlrm-dcnv2_top_mlp_backward_{text}", "mlp_backward",
            "Backward of the " + what + " Returns the gradients of the input (the cross network's backward "
            "input) and of every weight and bias given the gradient of the logit (activations recomputed).",
            sizes, last_relu=False, x_source=x_source, x_description="Cross-network output",
            workloads=_batches((1, 4, 8, 16, 32, 48, 64, 100)), backward=True, input_grad=True)
    return _mlp_problem(m, f"dlrm-dcnv2_top_mlp_{text}", "mlp", what, sizes, last_relu=False, x_source=x_source,
                        x_description="Cross-network output", workloads=_batches((1, 4, 16, 32, 64, 100, 128, 256)),
                        backward=False, input_grad=False)


# --- interaction + top MLP ----------------------------------------------------------------------------------

_INTERACTION_TOP = '''@torch.no_grad()
def run(dense, sparse, v_kernels, w_kernels, bias, top_w0, top_b0, top_w1, top_b1, top_w2, top_b2, top_w3, top_b3,
        top_w4, top_b4):
    x0 = torch.cat((dense.unsqueeze(1), sparse), dim=1).flatten(1)
    x = _low_rank_cross(x0, v_kernels, w_kernels, bias)
    top = [(top_w0, top_b0), (top_w1, top_b1), (top_w2, top_b2), (top_w3, top_b3), (top_w4, top_b4)]
    for index, (weight, b) in enumerate(top):
        x = F.linear(x, weight, b)
        if index < len(top) - 1:
            x = torch.relu(x)
    return x
'''


def interaction_top_mlp(m: ModelRef) -> ProblemDraft:
    m = uses(m, *_DCN_KEYS, "over_arch_layer_sizes", "global_batch_size")
    tables, dim = m.config["num_sparse_features"], m.config["embedding_dim"]
    top = m.config["over_arch_layer_sizes"]
    width = (tables + 1) * dim
    axes = _dcn_axes(m, split_input=True)
    dims = ["width"] + [f"top_{i}" for i in range(len(top))]
    for index, size in enumerate(top):
        axes[dims[index + 1]] = const(size, f"over_arch_layer_sizes[{index}]")
    inputs = {"dense": tensor(["batch_size", "dim"], "float32", "Bottom-MLP output"),
              "sparse": tensor(["batch_size", "num_sparse", "dim"], "float32", "Pooled embeddings"),
              **_low_rank_inputs()}
    for index in range(len(top)):
        inputs[f"top_w{index}"] = tensor([dims[index + 1], dims[index]], "float32")
        inputs[f"top_b{index}"] = tensor([dims[index + 1]], "float32")
    reference = _dcn_reference(_INTERACTION_TOP, top=top)
    return problem(
        "DLRM", m, f"dlrm-dcnv2_interaction_top_mlp_l{m.config['dcn_num_layers']}_r{m.config['dcn_low_rank_dim']}",
        "dcn_interaction_top_mlp",
        f"{m.name} forward after the embeddings, as an inference step runs it: the bottom-MLP output and the "
        f"{tables} pooled embeddings concatenated (width {width}), dcn_num_layers {m.config['dcn_num_layers']} "
        f"low-rank cross layers (dcn_low_rank_dim {m.config['dcn_low_rank_dim']}, x_(l+1) = x_0 * (W_l (V_l x_l) "
        f"+ b_l) + x_l), then the top MLP over_arch_layer_sizes {top} (ReLU after every layer but the last) to the "
        "click logit. fp32.",
        axes=axes, inputs=inputs, outputs={"logit": tensor(["batch_size", dims[-1]], "float32")},
        reference=_HEADER + reference, workloads=_batches((1, 4, 8, 16, 32, 48, 64, 100)),
        tags=_ALIASES[m.name], custom_inputs_entrypoint="make_inputs")


# --- GPU tier (workload.jsonl; the recipes' own small workloads become workload.cpu.jsonl) ------------
# Local sweeps (catalog/sweeps.py is written on another branch; the lead dedupes at merge).

GPU_BATCHES = (1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 49152, 65536, 81920, 98304, 131072, 163840,
               196608, 262144)
"""Samples per call: per-GPU batches of training (global_batch_size 65536 over 8 GPUs = 8192) up to whole global
batches of 64k-256k samples on one device (inference servers batch as many)."""
TABLE_ROWS = (1_000_000, 2_500_000, 5_000_000, 10_000_000)
"""Rows of the 40M-row table on one GPU: 40,000,000 row-wise sharded over 40 to 4 GPUs (5M rows = 2.6 GB);
the whole table (20.5 GB) does not fit the 16 GB budget of a workload."""
TABLE_CAPS = (16384, 32768, 65536, 100_000, 131072, 200_000, 262144, 300_000, 400_000, 500_000, 600_000, 700_000,
              800_000, 900_000, 950_000, 1_000_000)
"""Per-table row caps of the fused 26-table lookup (smaller tables keep their published size): 1M rows caps the
five 40M-row tables and the 3M-row one, 7.6M rows (3.9 GB) in all."""
JAGGED_BATCHES = (256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384, 20480, 24576, 32768, 40960, 49152, 57344,
                  65536)
"""Samples of a padded [batch, 100, 128] fp32 batch (65536 samples: 3.4 GB)."""
JAGGED_FILL = (25, 50, 75, 99)
"""Mean rows per sample (of max_len 100), in turn."""


ADAGRAD_BATCHES = (256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 10240, 12288, 16384, 20480, 24576, 28672, 32768,
                   49152)
"""The Adagrad step writes one 512-byte row per lookup (100 per sample): 49,152 samples write 2.5 GB."""


def _gpu_batches(values=GPU_BATCHES):
    return [{"batch_size": b} for b in values]


def _gpu_tables(batches=GPU_BATCHES):
    return [{"batch_size": b, "num_embeddings": TABLE_ROWS[i % len(TABLE_ROWS)]} for i, b in enumerate(batches)]


def _gpu_fused_tables(m: ModelRef):
    rows = m.config["num_embeddings_per_feature"]
    return [{"batch_size": b, "total_rows": _capped_total(rows, c)} for b, c in zip(GPU_BATCHES, TABLE_CAPS)]


def _gpu_jagged():
    return [{"batch_size": b, "total_values": b * JAGGED_FILL[i % len(JAGGED_FILL)]}
            for i, b in enumerate(JAGGED_BATCHES)]


def drafts() -> list[ProblemDraft]:
    return [
        with_gpu_tier(embedding_bag(DLRM_DCNV2), _gpu_tables()),
        with_gpu_tier(fused_embedding_bags(DLRM_DCNV2), _gpu_fused_tables(DLRM_DCNV2)),
        with_gpu_tier(embedding_bag_adagrad(DLRM_DCNV2), _gpu_tables(ADAGRAD_BATCHES)),
        with_gpu_tier(jagged_to_padded(DLRM_DCNV2), _gpu_jagged()),
        with_gpu_tier(padded_to_jagged(DLRM_DCNV2), _gpu_jagged()),
        with_gpu_tier(dot_interaction(DLRM_V1), _gpu_batches()),
        with_gpu_tier(dot_interaction(DLRM_V1, backward=True), _gpu_batches()),
        with_gpu_tier(dcn_low_rank(DLRM_DCNV2), _gpu_batches()),
        with_gpu_tier(dcn_full_rank(DLRM_DCNV2), _gpu_batches()),
        with_gpu_tier(dcn_low_rank_backward(DLRM_DCNV2), _gpu_batches()),
        with_gpu_tier(bottom_mlp(DLRM_DCNV2), _gpu_batches()),
        with_gpu_tier(bottom_mlp(DLRM_DCNV2, backward=True), _gpu_batches()),
        with_gpu_tier(top_mlp(DLRM_DCNV2), _gpu_batches()),
        with_gpu_tier(top_mlp(DLRM_DCNV2, backward=True), _gpu_batches()),
        with_gpu_tier(interaction_top_mlp(DLRM_DCNV2), _gpu_batches()),
    ]
