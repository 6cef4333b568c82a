"""The bundled recommender: DLRM with a DCN-v2 interaction, as in MLPerf Training v3+ (Criteo 1TB multi-hot).

Plain torch (``nn.EmbeddingBag`` per sparse feature, sum pooling), because torchrec does not install
here; the arithmetic is the same as torchrec's ``DLRM_DCN``: a bottom MLP on the 13 dense features, 26
pooled embeddings of dimension 128, the concatenation through 3 low-rank (512) cross layers, then the top
MLP to one logit. The published table sizes (five of 40 million rows) need about 100 GiB of float32
weights, so rows per table are capped (``max_rows``) and the report says so; hotness per feature, the
embedding dimension and every layer width stay as published.
"""

from __future__ import annotations

from typing import Any

from solbench.reach.built_model import BuiltModel, inference_step, training_step

DLRM_DCNV2: dict[str, Any] = {
    "name": "DLRM-DCNv2",
    "source": "https://github.com/facebookresearch/dlrm/blob/090956ee2319ddd349a42232958aefccfe3f7b0a/"
    "torchrec_dlrm/README.MD (MLPerf Training v3+ recommendation, Criteo 1TB multi-hot)",
    "num_dense_features": 13,
    "embedding_dim": 128,
    "num_embeddings_per_feature": [
        40000000,
        39060,
        17295,
        7424,
        20265,
        3,
        7122,
        1543,
        63,
        40000000,
        3067956,
        405282,
        10,
        2209,
        11938,
        155,
        4,
        976,
        14,
        40000000,
        40000000,
        40000000,
        590152,
        12973,
        108,
        36,
    ],
    "multi_hot_sizes": [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1],
    "dense_arch_layer_sizes": [512, 256, 128],
    "over_arch_layer_sizes": [1024, 1024, 512, 256, 1],
    "dcn_num_layers": 3,
    "dcn_low_rank_dim": 512,
    "global_batch_size": 65536,
}
"""The published configuration (also in ../shared/model-configs.json); bundled so reach needs no file."""

DLRM_NAMES = ("dlrm", "dlrm-dcnv2", "dlrm_dcnv2")
DEFAULT_MAX_ROWS = 100_000


def _torch_module():
    import torch

    return torch.nn.Module


class DenseArch(_torch_module()):
    """Bottom MLP: dense features -> embedding dimension (Linear + ReLU per layer)."""

    def __init__(self, sizes: list[int]):
        import torch

        super().__init__()
        layers = []
        for fan_in, fan_out in zip(sizes, sizes[1:]):
            layers += [torch.nn.Linear(fan_in, fan_out), torch.nn.ReLU()]
        self.layers = torch.nn.Sequential(*layers)

    def forward(self, dense):
        return self.layers(dense)


class SparseArch(_torch_module()):
    """One sum-pooled EmbeddingBag per sparse feature, fed (indices, offsets) as torchrec's KJT would."""

    def __init__(self, rows: list[int], dim: int):
        import torch

        super().__init__()
        self.tables = torch.nn.ModuleList(torch.nn.EmbeddingBag(n, dim, mode="sum", sparse=True) for n in rows)

    def forward(self, indices: list, offsets: list):
        return [table(i, o) for table, i, o in zip(self.tables, indices, offsets)]


class LowRankCrossNet(_torch_module()):
    """DCN-v2 cross layers: x_{l+1} = x_0 * (V_l (W_l x_l) + b_l) + x_l, W_l of rank ``low_rank``."""

    def __init__(self, width: int, layers: int, low_rank: int):
        import torch

        super().__init__()
        self.down = torch.nn.ModuleList(torch.nn.Linear(width, low_rank, bias=False) for _ in range(layers))
        self.up = torch.nn.ModuleList(torch.nn.Linear(low_rank, width) for _ in range(layers))

    def forward(self, x0):
        x = x0
        for down, up in zip(self.down, self.up):
            x = x0 * up(down(x)) + x
        return x


class FeatureInteraction(_torch_module()):
    """The DCN interaction of torchrec's DLRM_DCN: concatenate dense and pooled sparse, cross them."""

    def __init__(self, width: int, layers: int, low_rank: int):
        super().__init__()
        self.crossnet = LowRankCrossNet(width, layers, low_rank)

    def forward(self, dense, pooled: list):
        import torch

        return self.crossnet(torch.cat([dense] + pooled, dim=1))


class OverArch(_torch_module()):
    """Top MLP to one logit (Linear + ReLU, last layer linear)."""

    def __init__(self, fan_in: int, sizes: list[int]):
        import torch

        super().__init__()
        layers = []
        for i, (a, b) in enumerate(zip([fan_in] + sizes, sizes)):
            layers.append(torch.nn.Linear(a, b))
            if i < len(sizes) - 1:
                layers.append(torch.nn.ReLU())
        self.layers = torch.nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


class DLRMDCNv2(_torch_module()):
    """The whole model: dense arch, sparse arch, DCN interaction, over arch."""

    def __init__(self, config: dict[str, Any], rows: list[int]):
        super().__init__()
        dim = config["embedding_dim"]
        self.dense_arch = DenseArch([config["num_dense_features"], *config["dense_arch_layer_sizes"]])
        self.sparse_arch = SparseArch(rows, dim)
        width = dim * (len(rows) + 1)
        self.inter_arch = FeatureInteraction(width, config["dcn_num_layers"], config["dcn_low_rank_dim"])
        self.over_arch = OverArch(width, config["over_arch_layer_sizes"])

    def forward(self, dense, indices: list, offsets: list):
        return self.over_arch(self.inter_arch(self.dense_arch(dense), self.sparse_arch(indices, offsets)))


MODULE_FAMILIES = {
    "SparseArch": "embedding_bag",
    "EmbeddingBag": "embedding_bag",
    "LowRankCrossNet": "dcn_cross",
    "FeatureInteraction": "dcn_cross",
    "DenseArch": "mlp",
    "OverArch": "mlp",
}
"""Module class -> op family: what the ops inside each part of the model are for (see families.py). The
concatenation of dense and pooled features belongs to the DCN interaction (suite op_type dcn_cross)."""


def scaled_rows(config: dict[str, Any], max_rows: int) -> list[int]:
    return [min(n, max_rows) for n in config["num_embeddings_per_feature"]]


def dlrm_inputs(config: dict[str, Any], rows: list[int], batch: int, device: str, generator):
    """Random dense features and, per sparse feature, ``batch`` bags of its published hotness (uniform ids)."""
    import torch

    dense = torch.rand(batch, config["num_dense_features"], generator=generator).to(device)
    indices, offsets = [], []
    for n, hot in zip(rows, config["multi_hot_sizes"]):
        indices.append(torch.randint(0, n, (batch * hot,), generator=generator).to(device))
        offsets.append((torch.arange(batch) * hot).to(device))
    return dense, indices, offsets


def build_dlrm(
    *, mode: str, batch: int, device: str, max_rows: int = DEFAULT_MAX_ROWS, overrides: dict[str, Any] | None = None
) -> BuiltModel:
    """DLRM-DCNv2 with rows per table capped at ``max_rows`` and one step on ``batch`` random samples;
    ``overrides`` replace published values (tests shrink the widths; the report says so)."""
    import torch

    config = {**DLRM_DCNV2, **(overrides or {})}
    rows = scaled_rows(config, max_rows)
    torch.manual_seed(0)
    model = DLRMDCNv2(config, rows).to(device)
    dense, indices, offsets = dlrm_inputs(config, rows, batch, device, torch.Generator().manual_seed(0))
    capped = [i for i, (a, b) in enumerate(zip(rows, config["num_embeddings_per_feature"])) if a < b]
    notes = [
        f"embedding rows capped at {max_rows:,} per table ({len(capped)} of {len(rows)} tables: "
        f"{sum(config['num_embeddings_per_feature']):,} published rows -> {sum(rows):,}); embedding dim, "
        "hotness per feature and all layer widths as published",
        f"batch {batch} (published global batch {config['global_batch_size']:,}); uniform random ids",
    ]
    if overrides:
        notes.append(f"configuration overridden: {', '.join(f'{k}={v}' for k, v in overrides.items())}")
    if mode == "training":
        model.train()
        sparse = [p for p in model.sparse_arch.parameters()]
        dense_params = [p for n, p in model.named_parameters() if not n.startswith("sparse_arch.")]
        optimizers = [torch.optim.Adagrad(dense_params, lr=0.005, foreach=True), torch.optim.SGD(sparse, lr=0.005)]
        labels = torch.randint(0, 2, (batch, 1), generator=torch.Generator().manual_seed(1)).float().to(device)

        class _Both:
            def zero_grad(self, set_to_none=True):
                for o in optimizers:
                    o.zero_grad(set_to_none=set_to_none)

            def step(self):
                for o in optimizers:
                    o.step()

        step = training_step(
            model,
            (dense, indices, offsets),
            lambda logits: torch.nn.functional.binary_cross_entropy_with_logits(logits, labels),
            _Both(),
        )
        notes.append(
            "training step: forward, BCE loss, backward (sparse embedding gradients), Adagrad on the "
            "dense parameters and SGD on the embedding rows (MLPerf uses row-wise Adagrad fused into the "
            "embedding backward, which plain torch lacks)"
        )
    else:
        model.eval()
        step = inference_step(model, (dense, indices, offsets))
        notes.append("inference step: one forward")
    return BuiltModel(
        name=config["name"],
        kind="dlrm",
        module=model,
        step=step,
        scaling=notes,
        config={"rows_per_table": rows, "max_rows": max_rows, "batch": batch, "embedding_dim": config["embedding_dim"]},
        module_families=dict(MODULE_FAMILIES),
    )
