"""Cost rules per ATen operation. An op with no rule here is reported as uncovered (fail closed).

Matrix-class ops count 2 FLOPs per multiply-accumulate at the rate of their operands' precision
(the precision the operands were dequantized from, where they were). Elementwise ops count FLOPs
per output element on vector units, transcendentals separately. Shape ops are free.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solbench.sol.costs import PRECISION_RANK, OpCost, precision_of


@dataclass(slots=True)
class OpCall:
    name: str
    args: tuple
    kwargs: dict
    outputs: list
    operand_precision: Callable[[Any], str]
    """Precision a tensor's values came from (e.g. float8 for a float32 tensor dequantized from fp8)."""

    def arg(self, index: int, name: str, default: Any = None) -> Any:
        """The argument at `index` or named `name` (an ATen op's arguments: any value), else `default`."""
        if name in self.kwargs:
            return self.kwargs[name]
        return self.args[index] if len(self.args) > index else default


def _bytes(tensor) -> int:
    return tensor.numel() * tensor.element_size()


def io_bytes(call: OpCall) -> tuple[int, int]:
    return _tensor_bytes(call.args) + _tensor_bytes(call.kwargs.values()), sum(_bytes(o) for o in call.outputs)


def _tensor_bytes(values) -> int:
    """Bytes of the tensors among `values`, lists included (every op's cost asks: kept lean)."""
    import torch

    total = 0
    for value in values:
        if isinstance(value, torch.Tensor):
            total += value.numel() * value.element_size()
        elif isinstance(value, (list, tuple)):
            total += sum(_bytes(a) for a in flatten(value) if isinstance(a, torch.Tensor))
    return total


def flatten(values) -> list:
    """Nested lists and tuples of arguments as one flat list."""
    flat = []
    for value in values:
        if isinstance(value, (list, tuple)):
            flat.extend(flatten(value))
        else:
            flat.append(value)
    return flat


def _compute_precision(tensor) -> str:
    precision = precision_of(tensor.dtype)
    return "float64" if precision == "float64" else ("float16" if precision in ("bfloat16", "float16") else "float32")


def _matrix(call: OpCall, a, b, macs: float, formula: str, extra_vector: float = 0.0) -> OpCost:
    precision = max((call.operand_precision(a), call.operand_precision(b)), key=_rank)
    read, written = io_bytes(call)
    vector = {_compute_precision(call.outputs[0]): extra_vector} if extra_vector else {}
    return OpCost(
        matrix_flops={precision: 2.0 * macs},
        vector_flops=vector,
        bytes_read=read,
        bytes_written=written,
        formula=formula,
    )


def _rank(precision: str) -> int:
    return PRECISION_RANK.get(precision, 3)


# --- matrix-class ------------------------------------------------------------------------------
def mm(call: OpCall) -> OpCost:
    a, b = call.args[0], call.args[1]
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    return _matrix(call, a, b, m * k * n, f"2*M*K*N = 2*{m}*{k}*{n}")


def addmm(call: OpCall) -> OpCost:
    a, b = call.args[1], call.args[2]
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    return _matrix(call, a, b, m * k * n, f"2*M*K*N + M*N = 2*{m}*{k}*{n} + {m}*{n}", extra_vector=m * n)


def bmm(call: OpCall) -> OpCost:
    a, b = call.args[0], call.args[1]
    batch, m, k, n = a.shape[0], a.shape[1], a.shape[2], b.shape[2]
    return _matrix(call, a, b, batch * m * k * n, f"2*B*M*K*N = 2*{batch}*{m}*{k}*{n}")


def baddbmm(call: OpCall) -> OpCost:
    a, b = call.args[1], call.args[2]
    batch, m, k, n = a.shape[0], a.shape[1], a.shape[2], b.shape[2]
    return _matrix(
        call,
        a,
        b,
        batch * m * k * n,
        f"2*B*M*K*N + B*M*N = 2*{batch}*{m}*{k}*{n} + {batch * m * n}",
        extra_vector=batch * m * n,
    )


def dot(call: OpCall) -> OpCost:
    a, b = call.args[0], call.args[1]
    return _matrix(call, a, b, a.shape[-1], f"2*K = 2*{a.shape[-1]}")


def mv(call: OpCall) -> OpCost:
    a, b = call.args[0], call.args[1]
    return _matrix(call, a, b, a.shape[0] * a.shape[1], f"2*M*K = 2*{a.shape[0]}*{a.shape[1]}")


def convolution(call: OpCall) -> OpCost:
    """Every output element of every group multiplies (C_in/groups) * prod(kernel) pairs; transposed
    convolutions scatter every input element over (C_out/groups) * prod(kernel) outputs."""
    x, weight = call.args[0], call.args[1]
    transposed = bool(call.arg(6, "transposed", False))
    kernel = math.prod(weight.shape[2:])
    if transposed:
        macs = x.numel() * weight.shape[1] * kernel
        formula = f"2*N*C_in*prod(in)*(C_out/groups)*prod(k) = 2*{x.numel()}*{weight.shape[1]}*{kernel}"
    else:
        macs = call.outputs[0].numel() * weight.shape[1] * kernel
        formula = f"2*N*C_out*prod(out)*(C_in/groups)*prod(k) = 2*{call.outputs[0].numel()}*{weight.shape[1]}*{kernel}"
    bias = call.arg(2, "bias")
    return _matrix(call, x, weight, macs, formula, extra_vector=call.outputs[0].numel() if bias is not None else 0.0)


def convolution_backward(call: OpCall) -> OpCost:
    """Each requested gradient of input and weight costs one forward convolution's MACs; the bias
    gradient sums grad_output (output_mask picks which of the three are computed)."""
    grad_output, x, weight = call.args[0], call.args[1], call.args[2]
    transposed = bool(call.arg(7, "transposed", False))
    mask = call.arg(10, "output_mask", (True, True, True))
    kernel = math.prod(weight.shape[2:])
    forward_macs = (x.numel() if transposed else grad_output.numel()) * weight.shape[1] * kernel
    passes = int(bool(mask[0])) + int(bool(mask[1]))
    bias_sum = grad_output.numel() if mask[2] else 0
    return _matrix(
        call,
        grad_output,
        weight,
        passes * forward_macs,
        f"{passes} x forward MACs (grad_input, grad_weight) = {passes}*2*{forward_macs}",
        extra_vector=bias_sum,
    )


def scaled_mm(call: OpCall) -> OpCost:
    a, b = call.args[0], call.args[1]
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    return _matrix(call, a, b, m * k * n, f"2*M*K*N at {precision_of(a.dtype)} = 2*{m}*{k}*{n}", extra_vector=m * n)


def grouped_mm(call: OpCall) -> OpCost:
    """Each row of a 2-D left operand meets exactly one group's matrix, so MACs = rows * K * N."""
    a, b = call.args[0], call.args[1]
    if a.dim() == 3 and b.dim() == 3:
        macs = a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
    elif a.dim() == 2 and b.dim() == 3:
        macs = a.shape[0] * a.shape[1] * b.shape[2]
    elif a.dim() == 2 and b.dim() == 2:  # K split into groups: every output element sums K products once
        macs = (
            call.outputs[0].numel() // max(call.outputs[0].shape[0], 1) * a.shape[0] * a.shape[1]
            if call.outputs[0].dim() == 3
            else a.shape[0] * a.shape[1] * b.shape[-1]
        )
    else:
        macs = a.shape[0] * a.shape[-1] * b.shape[-1]
    return _matrix(call, a, b, macs, f"2*rows*K*N (grouped) = {2 * macs}")


def attention(call: OpCall) -> OpCost:
    """Scaled dot-product attention: QK^T and PV over the (query, key) pairs the mask keeps.

    Causal masks keep sum_i min(i + 1, S_k) pairs (PyTorch's top-left alignment). Grouped-query
    attention costs the same per query head as full multi-head attention; only K/V bytes shrink.
    """
    q, k, v = call.args[0], call.args[1], call.args[2]
    name = call.name
    causal_index = {"_scaled_dot_product_efficient_attention": 6, "_scaled_dot_product_cudnn_attention": 6}.get(name, 4)
    is_causal = bool(call.arg(causal_index, "is_causal", False))
    batch_heads = math.prod(q.shape[:-2])
    query_length, key_length, head_dim, value_dim = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    pairs = _causal_pairs(query_length, key_length) if is_causal else query_length * key_length
    macs = batch_heads * pairs * (head_dim + value_dim)
    formula = (
        f"2*B*H*pairs*(D_qk+D_v), pairs={pairs} ({'causal' if is_causal else 'full'} "
        f"{query_length}x{key_length}) = {2 * macs}"
    )
    cost = _matrix(call, q, k, macs, formula)
    # Online softmax: scale, running max, subtract, sum per pair (4 FLOPs) and one exp.
    return OpCost(
        matrix_flops=cost.matrix_flops,
        vector_flops={_compute_precision(q): 4.0 * batch_heads * pairs},
        special_ops=float(batch_heads * pairs),
        bytes_read=cost.bytes_read,
        bytes_written=cost.bytes_written,
        formula=formula + "; softmax: 4 FLOPs + 1 exp per pair",
    )


def attention_backward(call: OpCall) -> OpCost:
    """Backward of scaled dot-product attention over the kept (query, key) pairs: S = QK^T is recomputed,
    then dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q: pairs x (3*D_qk + 2*D_v) MACs; per pair the
    softmax is recomputed (1 exp) and dS = P * (dP - rowsum(dO*O)) costs ~4 FLOPs."""
    q, k, v = call.args[1], call.args[2], call.args[3]
    causal_index = {
        "_scaled_dot_product_flash_attention_for_cpu_backward": 7,
        "_scaled_dot_product_flash_attention_backward": 11,
        "_scaled_dot_product_efficient_attention_backward": 11,
        "_scaled_dot_product_cudnn_attention_backward": 14,
    }.get(call.name, 7)
    is_causal = bool(call.arg(causal_index, "is_causal", False))
    batch_heads = math.prod(q.shape[:-2])
    query_length, key_length, head_dim, value_dim = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    pairs = _causal_pairs(query_length, key_length) if is_causal else query_length * key_length
    macs = batch_heads * pairs * (3 * head_dim + 2 * value_dim)
    formula = (
        f"2*B*H*pairs*(3*D_qk+2*D_v), pairs={pairs} ({'causal' if is_causal else 'full'} "
        f"{query_length}x{key_length}) = {2 * macs}; softmax recompute + dS: 4 FLOPs + 1 exp per pair"
    )
    cost = _matrix(call, q, k, macs, formula)
    return OpCost(
        matrix_flops=cost.matrix_flops,
        vector_flops={_compute_precision(q): 4.0 * batch_heads * pairs},
        special_ops=float(batch_heads * pairs),
        bytes_read=cost.bytes_read,
        bytes_written=cost.bytes_written,
        formula=formula,
    )


def _causal_pairs(query_length: int, key_length: int) -> int:
    full_rows = min(query_length, key_length)
    return full_rows * (full_rows + 1) // 2 + max(query_length - key_length, 0) * key_length


# --- elementwise, reductions, normalisation -------------------------------------------------------
# (vector FLOPs per output element, transcendentals per output element)
POINTWISE_COST = {
    "exp": (0, 1),
    "exp2": (0, 1),
    "expm1": (1, 1),
    "log": (0, 1),
    "log2": (0, 1),
    "log1p": (1, 1),
    "log10": (0, 1),
    "tanh": (0, 1),
    "sigmoid": (2, 1),
    "sin": (0, 1),
    "cos": (0, 1),
    "tan": (0, 1),
    "rsqrt": (0, 1),
    "sqrt": (0, 1),
    "erf": (0, 1),
    "erfinv": (0, 1),
    "reciprocal": (0, 1),
    "atan": (0, 1),
    "silu": (2, 1),
    "gelu": (7, 1),
    "softplus": (2, 2),
    "mish": (4, 3),
    "elu": (2, 1),
    "selu": (3, 1),
    "logit": (2, 1),
    "pow": (1, 0),
    "sign": (1, 0),
    "hardswish": (4, 0),
    "hardsigmoid": (3, 0),
    "lerp": (2, 0),
    "addcmul": (2, 0),
    "addcdiv": (2, 0),
    "xlogy": (1, 1),
    "atan2": (1, 1),
    "clamp": (2, 0),
    "where": (1, 0),
    "_to_copy": (0, 0),
    "copy": (0, 0),
    "masked_fill": (1, 0),
    "bitwise_and": (1, 0),
    "bitwise_or": (1, 0),
    "bitwise_xor": (1, 0),
    "bitwise_not": (1, 0),
    "bitwise_left_shift": (1, 0),
    "bitwise_right_shift": (1, 0),
    "__rshift__": (1, 0),
    "__lshift__": (1, 0),
    "__and__": (1, 0),
    "__or__": (1, 0),
    "fill": (0, 0),
    "zero": (0, 0),
}
POINTWISE_COST["floor_divide"] = (1, 0)  # extract: MoE token -> expert-slot index arithmetic
REDUCTION_COST = {  # per input element
    "sum": (1, 0),
    "mean": (1, 0),
    "amax": (1, 0),
    "amin": (1, 0),
    "max": (1, 0),
    "min": (1, 0),
    "prod": (1, 0),
    "argmax": (1, 0),
    "argmin": (1, 0),
    "any": (1, 0),
    "all": (1, 0),
    "norm": (2, 0),
    "linalg_vector_norm": (2, 0),
    "var": (3, 0),
    "std": (3, 0),
    "var_mean": (3, 0),
    "std_mean": (3, 0),
    "logsumexp": (3, 1),
    "_softmax": (4, 1),
    "_log_softmax": (4, 1),
    "cumsum": (1, 0),
    "cumprod": (1, 0),
    "count_nonzero": (1, 0),
    "native_layer_norm": (7, 0),
    "native_group_norm": (7, 0),
    "native_batch_norm": (5, 0),
    "_native_batch_norm_legit_no_training": (4, 0),
    "_fused_rms_norm": (4, 0),
    "topk": (1, 0),
    "aminmax": (2, 0),
}
REDUCTION_COST["histc"] = (1, 0)  # extract: tokens per expert (grouped-GEMM offsets), one bin update per element
REDUCTION_COST["bincount"] = (1, 0)  # tokens per expert from real routing indices: one bin update per element
# L2 backward blocks: normalisation gradients read grad_out and input once (per element: x_hat, two
# row sums for the mean terms, the combination, weight/bias gradient accumulation)
REDUCTION_COST["native_layer_norm_backward"] = (8, 0)
REDUCTION_COST["native_group_norm_backward"] = (8, 0)
REDUCTION_COST["_safe_softmax"] = (4, 1)  # softmax that maps fully masked rows to 0 (SDPA math path with a mask)
# softmax gradients (SDPA's math path in training, explicit softmax under autograd): dx = y * (dy - sum(dy * y)),
# log-softmax: dx = dy - exp(y) * sum(dy); per element of the incoming gradient
REDUCTION_COST["_softmax_backward_data"] = (4, 0)
REDUCTION_COST["_log_softmax_backward_data"] = (3, 1)
FREE_OPS = {  # shape, allocation and bookkeeping ops: no arithmetic
    "view",
    "_unsafe_view",
    "reshape",
    "expand",
    "permute",
    "transpose",
    "t",
    "squeeze",
    "unsqueeze",
    "slice",
    "select",
    "as_strided",
    "alias",
    "detach",
    "unbind",
    "split",
    "split_with_sizes",
    "chunk",
    "flatten",
    "unflatten",
    "diagonal",
    "narrow",
    "lift_fresh",
    "lift_fresh_copy",
    "empty",
    "empty_like",
    "empty_strided",
    "zeros",
    "zeros_like",
    "ones",
    "ones_like",
    "full",
    "full_like",
    "new_empty",
    "new_zeros",
    "new_ones",
    "new_full",
    "new_empty_strided",
    "arange",
    "scalar_tensor",
    "_local_scalar_dense",
    "clone",
    "contiguous",
    "cat",
    "stack",
    "repeat",
    "repeat_interleave",
    "tile",
    "flip",
    "roll",
    "constant_pad_nd",
    "pad",
    "triu",
    "tril",
    "view_as_real",
    "view_as_complex",
    "resolve_conj",
    "resolve_neg",
    "_reshape_alias",
    "unfold",
    "movedim",
    "set_",
    "resize_",
    "_assert_async",
    "_assert_scalar",
    "sym_size",
    "sym_stride",
    "sym_numel",
    "dim",
    "linspace",
    "eye",
    "index_select",
    "gather",
    "embedding",
    "index",
    "device",
    "_unsafe_index",
    "slice_scatter",
    "select_scatter",
    "randn",
    "rand",
    "randint",
    "normal",
    "uniform",
    "bernoulli",
    "dropout",
    "native_dropout",
    "sort",
    "argsort",
    "nonzero",
    "masked_select",
    "unique",
    "_unique2",
    "bucketize",
    "searchsorted",
    "one_hot",
    "isnan",
    "isinf",
    "isfinite",
    "logical_not",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "equal",
    "is_nonzero",
    "item",
    "tril_indices",
    "triu_indices",
    "promote_types",
    "result_type",
}
FREE_OPS |= {"slice_backward", "select_backward"}  # extract: gradients of slices are zero-filled copies
GATHER_OPS = {"embedding": 0, "index_select": 0, "gather": 0, "index": 0, "_unsafe_index": 0}
"""Ops that read only the rows they index from this argument position."""
SCATTER_ADD_OPS = {
    "index_put": 2,
    "index_add": 3,
    "scatter_add": 3,
    "scatter": 3,
    "scatter_reduce": 3,
    "index_copy": 3,
    "masked_scatter": 2,
}


def pointwise(call: OpCall) -> OpCost:
    vector_per, special_per = POINTWISE_COST.get(call.name.rstrip("_"), (1, 0))
    out = call.outputs[0]
    elements = out.numel()
    read, written = io_bytes(call)
    return OpCost(
        vector_flops={_compute_precision(out): float(vector_per * elements)} if vector_per else {},
        special_ops=float(special_per * elements),
        bytes_read=read,
        bytes_written=written,
        formula=f"{vector_per} FLOP + {special_per} special per element x {elements}",
    )


def reduction(call: OpCall) -> OpCost:
    import torch

    vector_per, special_per = REDUCTION_COST[call.name]
    source = call.args[0] if isinstance(call.args[0], torch.Tensor) else call.outputs[0]
    elements = source.numel()
    special = special_per * elements
    if call.name in ("native_layer_norm", "native_group_norm", "_fused_rms_norm"):
        special = call.outputs[-1].numel()  # one rsqrt per normalised row
    if call.name == "topk":
        vector_per = max(1.0, math.log2(max(int(call.args[1]), 2)))
    read, written = io_bytes(call)
    return OpCost(
        vector_flops={_compute_precision(source): float(vector_per * elements)},
        special_ops=float(special),
        bytes_read=read,
        bytes_written=written,
        formula=f"{vector_per:g} FLOP + {special_per} special per input element x {elements}",
    )


def free(call: OpCall) -> OpCost:
    read, written = io_bytes(call)
    return OpCost(bytes_read=read, bytes_written=written, formula="no arithmetic")


def scatter_add(call: OpCall) -> OpCost:
    import torch

    index = SCATTER_ADD_OPS[call.name.rstrip("_")]
    values = call.args[index] if len(call.args) > index else None
    if isinstance(values, (list, tuple)):
        values = values[0] if values else None
    elements = values.numel() if isinstance(values, torch.Tensor) else call.outputs[0].numel()
    read, written = io_bytes(call)
    return OpCost(
        vector_flops={_compute_precision(call.outputs[0]): float(elements)},
        bytes_read=read,
        bytes_written=written,
        formula=f"1 FLOP per scattered element x {elements}",
    )


MATRIX_RULES: dict[str, Callable[[OpCall], OpCost]] = {
    "mm": mm,
    "addmm": addmm,
    "bmm": bmm,
    "baddbmm": baddbmm,
    "dot": dot,
    "vdot": dot,
    "mv": mv,
    "convolution": convolution,
    "_convolution": convolution,
    "convolution_overrideable": convolution,
    "convolution_backward": convolution_backward,
    "_scaled_mm": scaled_mm,
    "_grouped_mm": grouped_mm,
    "_scaled_grouped_mm": grouped_mm,
    "_scaled_dot_product_flash_attention_for_cpu": attention,
    "_scaled_dot_product_flash_attention": attention,
    "_scaled_dot_product_efficient_attention": attention,
    "_scaled_dot_product_cudnn_attention": attention,
    "_scaled_dot_product_attention_math": attention,
    "_scaled_dot_product_flash_attention_for_cpu_backward": attention_backward,
    "_scaled_dot_product_flash_attention_backward": attention_backward,
    "_scaled_dot_product_efficient_attention_backward": attention_backward,
    "_scaled_dot_product_cudnn_attention_backward": attention_backward,
}


def rule_for(name: str, tags) -> Callable[[OpCall], OpCost] | None:
    """The rule for an op (overload packet name without the namespace), or None: uncovered."""
    import torch

    base = name.rstrip("_") if name not in MATRIX_RULES else name
    if name in MATRIX_RULES:
        return MATRIX_RULES[name]
    if base in REDUCTION_COST:
        return reduction
    if base in SCATTER_ADD_OPS:
        return scatter_add
    if base in FREE_OPS or name in FREE_OPS:
        return free
    if torch.Tag.pointwise in tags or base in POINTWISE_COST:
        return pointwise
    return None
