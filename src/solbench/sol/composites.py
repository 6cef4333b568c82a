"""Calls recorded as one op where PyTorch would hand the recorder only their decomposed parts.

`F.scaled_dot_product_attention` with a value head size other than the query's (multi-head latent
attention: 192 for q and k, 128 for v) has no fused CPU kernel, so PyTorch runs its math path: separate
matrix products over every (query, key) pair, a mask and a softmax, in fp32 for reduced-precision inputs.
Recorded that way, a causal call is charged the full square of pairs at the fp32 rate, which is no lower bound
on what a fused kernel does. Recorded as one ``_scaled_dot_product_attention_math`` call, the attention rule
charges it like every other attention: the causal pairs, at the inputs' precision.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

_SDPA = F.scaled_dot_product_attention


class FusedAttention(TorchFunctionMode):
    """Under an `OpRecorder`: scaled-dot-product attention calls that take the math path are recorded whole."""

    def __init__(self, recorder):
        super().__init__()
        self._recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _PYTHON_VALUE_READS:
            self._recorder.python_value_reads += 1  # a routed loop's template must read no values (sol/routed.py)
        if func is not _SDPA or not _takes_math_path(args, kwargs):
            return func(*args, **kwargs)  # every torch-level call under the recorder passes here: kept lean
        import torch

        with self._recorder.paused():
            result = func(*args, **kwargs)
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")
        given = dict(zip(names, args)) | kwargs
        tensors = (given["query"], given["key"], given["value"])
        options = {k: given[k] for k in ("attn_mask", "is_causal", "scale") if given.get(k) is not None}
        self._recorder.record_composite(
            torch.ops.aten._scaled_dot_product_attention_math.default, tensors, options, result
        )
        return result


def _takes_math_path(args, kwargs) -> bool:
    """Query and value head sizes differ: no fused kernel takes the call."""
    query = args[0] if args else kwargs.get("query")
    value = args[2] if len(args) > 2 else kwargs.get("value")
    return query is not None and value is not None and query.shape[-1] != value.shape[-1]


def _python_value_reads() -> frozenset:
    import torch

    return frozenset({torch.Tensor.tolist, torch.Tensor.numpy, torch.Tensor.__array__, torch.Tensor.data_ptr})


_PYTHON_VALUE_READS = _python_value_reads()
"""Tensor methods that read values into Python without an ATen call the recorder would see."""
