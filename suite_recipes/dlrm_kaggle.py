"""DLRM on Criteo Kaggle (facebookresearch/dlrm, ``bench/dlrm_s_criteo_kaggle.sh``): the dot interaction and top MLP.

``DLRM_Net.interact_features`` with ``arch_interaction_op="dot"`` and ``arch_interaction_itself=False``
(dlrm_s_pytorch.py): the bottom MLP output and the 26 embedding-bag outputs (arch_sparse_feature_size 16) are
stacked to [batch, 27, 16], their pairwise dot products Z = T T^T taken, the strictly lower triangle (351 pairs,
row-major as the script's ``li``/``lj`` lists) concatenated after the dense vector (367 features), then the top
MLP ``arch_mlp_top`` 512-256-1 (ReLU, ReLU, sigmoid: ``create_mlp`` with ``sigmoid_top``). Batches from the
training mini_batch_size 128 to the test_mini_batch_size 16384 and beyond (GPU tier).
"""

from __future__ import annotations

from suite_recipes.builder import slug
from suite_recipes.l2 import draft
from suite_recipes.models import model
from suite_recipes.vision_language import two_tiers
from solbench.suite.draft import ProblemDraft

DLRM_KAGGLE = model("dlrm_criteo_kaggle (facebookresearch/dlrm benchmark)", None, "recommender",
                    {"num_sparse_features": 26, "arch_sparse_feature_size": 16, "arch_mlp_top": [512, 256, 1],
                     "mini_batch_size": 128, "test_mini_batch_size": 16384})

_DOT_TOP = '''@torch.no_grad()
def run(dense_x, sparse_embeddings, top_w0, top_b0, top_w1, top_b1, top_w2, top_b2):
    t = torch.cat([dense_x[:, None, :], sparse_embeddings], dim=1)
    z = torch.bmm(t, t.transpose(1, 2))
    li, lj = torch.tril_indices(t.shape[1], t.shape[1], offset=-1, device=t.device)
    r = torch.cat([dense_x, z[:, li, lj]], dim=1)
    h = F.relu(F.linear(r, top_w0, top_b0))
    h = F.relu(F.linear(h, top_w1, top_b1))
    return torch.sigmoid(F.linear(h, top_w2, top_b2))
'''


def dot_interaction_top_mlp(m) -> ProblemDraft:
    tables, d, top = m.config["num_sparse_features"], m.config["arch_sparse_feature_size"], m.config["arch_mlp_top"]
    pairs = (tables + 1) * tables // 2
    width = d + pairs
    f32 = "float32"
    gpu = [{"batch_size": b} for b in (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 24576, 32768, 49152, 65536,
                                       98304, 131072, 196608, 262144)]
    cpu = [{"batch_size": b} for b in (1, 2, 8, 16, 32, 64, 100, 200)]
    d0 = draft(
        m, f"{slug(m)}_dot_interaction_top_mlp_f{tables + 1}_d{d}", "dlrm_interaction_top_mlp",
        f"{m.name} feature interaction and top MLP: {tables + 1} vectors of arch_sparse_feature_size {d} (the bottom "
        f"MLP output and num_sparse_features {tables} embedding-bag outputs), pairwise dot products without the "
        f"diagonal ({pairs}), concatenated after the dense vector ({width} features), then arch_mlp_top {top} "
        f"(Linear {width}->{top[0]} ReLU, {top[0]}->{top[1]} ReLU, {top[1]}->{top[2]} sigmoid). fp32 as the "
        f"benchmark; mini_batch_size {m.config['mini_batch_size']}, test_mini_batch_size "
        f"{m.config['test_mini_batch_size']}.",
        {"batch_size": (None, "samples"), "dim": (d, "arch_sparse_feature_size"),
         "num_tables": (tables, "num_sparse_features"), "top_in": (width, "dim + (tables+1) tables / 2"),
         "top0": (top[0], "arch_mlp_top[0]"), "top1": (top[1], "arch_mlp_top[1]"), "top2": (top[2], "arch_mlp_top[2]")},
        {"dense_x": (["batch_size", "dim"], f32, 1.0),
         "sparse_embeddings": (["batch_size", "num_tables", "dim"], f32, 1.0),
         "top_w0": (["top0", "top_in"], f32, width ** -0.5), "top_b0": (["top0"], f32, 0.1),
         "top_w1": (["top1", "top0"], f32, top[0] ** -0.5), "top_b1": (["top1"], f32, 0.1),
         "top_w2": (["top2", "top1"], f32, top[1] ** -0.5), "top_b2": (["top2"], f32, 0.1)},
        {"output": (["batch_size", "top2"], f32)}, _DOT_TOP, gpu)
    return two_tiers(d0, "DLRM", [], cpu, kernel="dlrm_interaction")


def drafts() -> list[ProblemDraft]:
    return [dot_interaction_top_mlp(DLRM_KAGGLE)]
