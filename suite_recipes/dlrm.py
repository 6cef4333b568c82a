"""DLRM: the bottom (dense) and top (over) MLPs of DLRM-DCNv2 (MLPerf Training v3+), forward and training backward
(op_type ``mlp`` / ``mlp_backward``), from the templates ``templates/dlrm/mlp.py`` and ``mlp_backward.py``.

The set's other problems (embedding bags, jagged <-> padded, dot interaction, DCN cross layers, the fused
interaction + top MLP) are hand-written folders, first made by this module (their provenance.json says so).

Source (values copied from src/solbench/suite/data/model-configs.json; tests/suite/test_provenance.py checks them):
DLRM-DCNv2, MLPerf Training v3+ "recommendation_v2": facebookresearch/dlrm torchrec_dlrm/README.MD at 090956ee
(dense arch 512-256-128, over arch 1024-1024-512-256-1, 3 low-rank DCN layers of rank 512, global batch 65536).

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem (per-GPU training batches
of 8,192 up to whole global batches of 65,536 and beyond, as inference servers batch); ``workload.cpu.jsonl`` the
recipes' small ones.
"""

from __future__ import annotations

from typing import Any

from solbench.suite.draft import ModelRef, ProblemDraft
from suite_recipes.builder import const, problem, tensor, uses, var
from suite_recipes.models import model
from suite_recipes.sweeps import with_gpu_tier
from suite_recipes.template import render

DLRM_DCNV2 = model(
    "DLRM-DCNv2 (MLPerf Training v3+ recommendation, Criteo 1TB multi-hot)",
    None,
    "recommender",
    {
        "num_dense_features": 13,
        "num_sparse_features": 26,
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
        "interaction_type": "dcn",
        "dcn_num_layers": 3,
        "dcn_low_rank_dim": 512,
        "global_batch_size": 65536,
        "optimizer": "adagrad",
        "learning_rate": 0.005,
    },
)
DLRM_V1 = model(
    "DLRM (MLPerf Training v0.7-v2.1 reference, Criteo Terabyte, dot interaction)",
    None,
    "recommender",
    {
        "num_dense_features": 13,
        "num_sparse_features": 26,
        "arch_sparse_feature_size": 128,
        "arch_mlp_bot": [13, 512, 256, 128],
        "arch_mlp_top": [1024, 1024, 512, 256, 1],
        "interaction": "dot",
        "mini_batch_size": 2048,
    },
)

# Short names of the two models, kept after the full ``model:`` tag (which names the model-configs.json
# record): the names the reach layer and the issue use for them.
_ALIASES = {DLRM_DCNV2.name: ["model:dlrm-dcnv2", "domain:recsys"], DLRM_V1.name: ["model:dlrm-v1", "domain:recsys"]}


_PER_GPU = (
    "Per-GPU batches: global_batch_size 65536 over 8 GPUs is 8192 samples each; the CPU workloads "
    "stop lower (at about 3 GFLOP per call) and keep the shape class"
)


def _batches(values) -> list[dict[str, int]]:
    return [{"batch_size": v} for v in values]


# --- MLPs ------------------------------------------------------------------------------------------------


def _mlp_extra_inputs(backward: bool, last_relu: bool) -> str:
    lines = []
    if backward and not last_relu:
        lines.append('    del out[f"b{len(SIZES) - 2}"]  # changes no gradient: not an input')
    if backward:
        lines.append('    out["grad_output"] = torch.randn(a["batch_size"], SIZES[-1], device=device)')
    return "".join(line + "\n" for line in lines)


def _mlp_problem(
    m: ModelRef,
    name: str,
    op_type: str,
    description: str,
    sizes: list[int],
    *,
    last_relu: bool,
    x_source: str,
    x_description: str,
    workloads,
    backward: bool,
    input_grad: bool,
) -> ProblemDraft:
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
    common = {
        "SIZES": list(sizes),
        "LAST_RELU": last_relu,
        "X": x_source,
        "EXTRA": _mlp_extra_inputs(backward, last_relu),
    }
    joined = ", ".join(params)
    if not backward:
        reference = render("dlrm/mlp.py", **common, PARAMS=joined)
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
        reference = render(
            "dlrm/mlp_backward.py",
            **common,
            PARAMS=joined,
            GRADS=", ".join(grads),
            LAST_BIAS=last_bias_line,
            X_LEAF="leaves[0]" if input_grad else "x",
            PARAM_SLICE="[1:]" if input_grad else "",
        )
        shapes = {
            "x": ["batch_size", dims[0]],
            **{f"w{i}": [dims[i + 1], dims[i]] for i in range(layers)},
            **{f"b{i}": [dims[i + 1]] for i in range(layers)},
        }
        outputs = {f"grad_{n}": tensor(shapes[n], "float32") for n in grads}
    return problem(
        "DLRM",
        m,
        name,
        op_type,
        description,
        axes=axes,
        inputs=inputs,
        outputs=outputs,
        reference=reference,
        workloads=workloads,
        backward=backward,
        tags=_ALIASES[m.name],
        custom_inputs_entrypoint="make_inputs",
    )


def bottom_mlp(m: ModelRef, *, backward: bool = False) -> ProblemDraft:
    m = uses(m, "num_dense_features", "dense_arch_layer_sizes", "global_batch_size")
    sizes = [m.config["num_dense_features"], *m.config["dense_arch_layer_sizes"]]
    text = "-".join(map(str, sizes))
    what = (
        f"{m.name} bottom MLP (TorchRec DenseArch): num_dense_features {m.config['num_dense_features']} "
        f"dense features through Linear+ReLU layers dense_arch_layer_sizes {text} (ReLU after every layer), "
        f"fp32. {_PER_GPU}."
    )
    workloads = _batches((1, 16, 128, 512, 1000, 2048, 3000, 4096))
    x_source = 'torch.log1p(torch.rand(a["batch_size"], SIZES[0], device=device) * 100.0)'
    x_description = "Dense features, log(1 + x) transformed as in the Criteo preprocessing"
    if backward:
        return _mlp_problem(
            m,
            f"dlrm-dcnv2_bottom_mlp_backward_{text}",
            "mlp_backward",
            "Backward of the " + what + " Returns the weight and bias gradients (the dense features need none) "
            "given the gradient of the output, as a training step does (activations recomputed).",
            sizes,
            last_relu=True,
            x_source=x_source,
            x_description=x_description,
            workloads=workloads,
            backward=True,
            input_grad=False,
        )
    return _mlp_problem(
        m,
        f"dlrm-dcnv2_bottom_mlp_{text}",
        "mlp",
        what,
        sizes,
        last_relu=True,
        x_source=x_source,
        x_description=x_description,
        workloads=workloads,
        backward=False,
        input_grad=False,
    )


def top_mlp(m: ModelRef, *, backward: bool = False) -> ProblemDraft:
    m = uses(m, "num_sparse_features", "embedding_dim", "over_arch_layer_sizes", "global_batch_size")
    width = (m.config["num_sparse_features"] + 1) * m.config["embedding_dim"]
    sizes = [width, *m.config["over_arch_layer_sizes"]]
    text = "-".join(map(str, sizes))
    what = (
        f"{m.name} top MLP (TorchRec OverArch): the DCN output of width {width} ((num_sparse_features + 1) "
        f"x embedding_dim) through over_arch_layer_sizes {text}, ReLU after every layer but the last, which "
        f"gives the click logit. fp32. {_PER_GPU}."
    )
    x_source = 'torch.randn(a["batch_size"], SIZES[0], device=device)'
    if backward:
        return _mlp_problem(
            m,
            f"dlrm-dcnv2_top_mlp_backward_{text}",
            "mlp_backward",
            "Backward of the " + what + " Returns the gradients of the input (the cross network's backward "
            "input) and of every weight and bias given the gradient of the logit (activations recomputed).",
            sizes,
            last_relu=False,
            x_source=x_source,
            x_description="Cross-network output",
            workloads=_batches((1, 4, 8, 16, 32, 48, 64, 100)),
            backward=True,
            input_grad=True,
        )
    return _mlp_problem(
        m,
        f"dlrm-dcnv2_top_mlp_{text}",
        "mlp",
        what,
        sizes,
        last_relu=False,
        x_source=x_source,
        x_description="Cross-network output",
        workloads=_batches((1, 4, 16, 32, 64, 100, 128, 256)),
        backward=False,
        input_grad=False,
    )


# --- GPU tier (workload.jsonl; the recipes' own small workloads become workload.cpu.jsonl) ------------

GPU_BATCHES = (
    1024,
    2048,
    4096,
    8192,
    12288,
    16384,
    24576,
    32768,
    49152,
    65536,
    81920,
    98304,
    131072,
    163840,
    196608,
    262144,
)
"""Samples per call: per-GPU batches of training (global_batch_size 65536 over 8 GPUs = 8192) up to whole global
batches of 64k-256k samples on one device (inference servers batch as many)."""


def _gpu_batches(values=GPU_BATCHES):
    return [{"batch_size": b} for b in values]


def drafts() -> list[ProblemDraft]:
    return [
        with_gpu_tier(bottom_mlp(DLRM_DCNV2), _gpu_batches()),
        with_gpu_tier(bottom_mlp(DLRM_DCNV2, backward=True), _gpu_batches()),
        with_gpu_tier(top_mlp(DLRM_DCNV2), _gpu_batches()),
        with_gpu_tier(top_mlp(DLRM_DCNV2, backward=True), _gpu_batches()),
    ]
