"""Op family of an addressable op: what it computes for the model, named as suite problems name op_type.

An ATen op alone says little (``aten::mul`` is in RMSNorm, RoPE, SwiGLU and DCN cross layers alike), so
the family comes, in order, from:

1. the op's own name where it is specific (``aten::_embedding_bag`` -> embedding_bag,
   ``aten::native_layer_norm`` -> layernorm, ``aten::_softmax`` -> softmax, optimiser ranges -> optimizer);
2. the autograd node that ran it in backward (``EmbeddingBagBackward0`` -> embedding_bag);
3. the innermost model part (of those that issued it) with a known family (``LlamaRMSNorm`` -> rmsnorm, ``LlamaMLP`` ->
   activation, ``LowRankCrossNet`` -> dcn_cross; the model's own ``module_families`` first);
4. else ``elementwise`` (or ``copy`` for layout changes).

The pass (forward, backward, optimizer) is kept beside the family: backward problems carry the op_type
suffix ``_backward``.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from solbench.reach.profile import ProfiledOp

_BY_OP_NAME: tuple[tuple[str, str], ...] = (
    ("aten::*embedding_bag*", "embedding_bag"),
    ("aten::embedding*", "embedding"),
    ("aten::*layer_norm*", "layernorm"),
    ("aten::*rms_norm*", "rmsnorm"),
    ("aten::*group_norm*", "groupnorm"),
    ("aten::*log_softmax*", "log_softmax"),
    ("aten::*softmax*", "softmax"),
    ("aten::*binary_cross_entropy*", "loss"),
    ("aten::*cross_entropy*", "cross_entropy"),
    ("aten::nll_loss*", "cross_entropy"),
    ("aten::topk", "topk"),
    ("aten::sort", "topk"),
    ("aten::cumsum", "cumsum"),
    ("aten::argmax", "argmax"),
)

_BY_BACKWARD_NODE: tuple[tuple[str, str], ...] = (
    ("EmbeddingBagBackward*", "embedding_bag"),
    ("EmbeddingBackward*", "embedding"),
    ("NativeLayerNormBackward*", "layernorm"),
    ("*SoftmaxBackward*", "softmax"),
    ("NllLoss*Backward*", "cross_entropy"),
)

_BY_MODULE: tuple[tuple[str, str], ...] = (
    ("*RMSNorm*", "rmsnorm"),
    ("*RmsNorm*", "rmsnorm"),
    ("*LayerNorm*", "layernorm"),
    ("*GroupNorm*", "groupnorm"),
    ("*Rotary*", "rope"),
    ("*Attention*", "rope"),
    ("*MLP*", "activation"),
    ("*FeedForward*", "activation"),
    ("*Act*", "activation"),
    ("*SiLU*", "activation"),
    ("*GELU*", "activation"),
    ("*EmbeddingBag*", "embedding_bag"),
    ("*Embedding*", "embedding"),
)
"""Module class globs; ops in attention modules outside the fused attention call are mostly RoPE and
reshapes around it (the rotary and q/k-norm arithmetic)."""

_LAYOUT = (
    "aten::copy_",
    "aten::contiguous",
    "aten::clone",
    "aten::to",
    "aten::_to_copy",
    "aten::cat",
    "aten::stack",
    "aten::transpose",
    "aten::permute",
    "aten::view",
    "aten::reshape",
)


def pass_of(call: ProfiledOp) -> str:
    if any(a.startswith("Optimizer.") for a in call.ancestors) or call.name.startswith("Optimizer."):
        return "optimizer"
    if call.backward_of is not None:
        return "backward"
    return "forward"


def family_of(call: ProfiledOp, module_families: Mapping[str, str] | None = None) -> str:
    """The op family of one addressable call (see the module docstring for the order of evidence)."""
    if pass_of(call) == "optimizer":
        return "optimizer"
    for pattern, family in _BY_OP_NAME:
        if fnmatchcase(call.name, pattern):
            return family
    if call.backward_of:
        for pattern, family in _BY_BACKWARD_NODE:
            if fnmatchcase(call.backward_of, pattern):
                return family
    for module in call.modules:
        if module_families and module in module_families:
            return module_families[module]
        for pattern, family in _BY_MODULE:
            if fnmatchcase(module, pattern):
                return family
    return "copy" if call.name in _LAYOUT else "elementwise"


def width_of(call: ProfiledOp) -> int | None:
    """The innermost dimension of the op's first tensor input: the shape class matched against problems."""
    for shape in call.shapes:
        if isinstance(shape, tuple) and shape and all(isinstance(d, int) for d in shape):
            return int(shape[-1])
    return None
