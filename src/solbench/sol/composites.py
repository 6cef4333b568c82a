"""Calls recorded as one op where PyTorch would hand the recorder only their decomposed parts.

`F.scaled_dot_product_attention` with a value head size other than the query's (multi-head latent
attention: 192 for q and k, 128 for v) has no fused CPU kernel, so PyTorch runs its math path: separate
matrix products over every (query, key) pair, a mask and a softmax, in fp32 for reduced-precision inputs.
Recorded that way, a causal call is charged the full square of pairs at the fp32 rate, which is no lower bound
on what a fused kernel does. Recorded as one ``_scaled_dot_product_attention_math`` call, the attention rule
charges it like every other attention: the causal pairs, at the inputs' precision.

On meta tensors (the analysis's shape-only runs) PyTorch picks no fused kernel at all: its choice of kernel is
made per device, and the meta device's answer is always the math path. A call on meta tensors is therefore
recorded as the CPU would run it: PyTorch's own CPU choice is asked with stand-in tensors that carry what that
choice reads (dtype, sizes, the last dimension's stride), and where it picks the fused CPU kernel, that kernel is
called on the meta tensors, after the boolean mask's conversion the CPU path makes first. Shape-only analysis
then records what fake tensors (which report the CPU device) record, without their cost: creating a
`FakeTensorMode` imports torch._dynamo, seconds in a fresh process.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

_ATTENTION_CALLS = frozenset(
    {
        F.scaled_dot_product_attention,
        torch.ops.aten.scaled_dot_product_attention,  # as exported graphs call it
        torch.ops.aten.scaled_dot_product_attention.default,
    }
)


class FusedAttention(TorchFunctionMode):
    """Under an `OpRecorder`: scaled-dot-product attention calls that take the math path are recorded whole, and
    calls on meta tensors run what the CPU would run."""

    def __init__(self, recorder):
        super().__init__()
        self._recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _PYTHON_VALUE_READS:
            self._recorder.python_value_reads += 1  # a routed loop's template must read no values (sol/routed.py)
        if func not in _ATTENTION_CALLS:
            return func(*args, **kwargs)  # every torch-level call under the recorder passes here: kept lean
        given = _attention_arguments(args, kwargs)
        if not _takes_math_path(given):
            if _on_meta(given) and _cpu_picks_fused_kernel(given):
                return _fused_cpu_kernel(given)
            return func(*args, **kwargs)

        with self._recorder.paused():
            result = func(*args, **kwargs)
        tensors = (given["query"], given["key"], given["value"])
        options = {k: given[k] for k in ("attn_mask", "is_causal", "scale") if given[k] is not None}
        self._recorder.record_composite(
            torch.ops.aten._scaled_dot_product_attention_math.default, tensors, options, result
        )
        return result


_ATTENTION_PARAMETERS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")


def _attention_arguments(args, kwargs) -> dict:
    """`F.scaled_dot_product_attention`'s arguments by name, defaults filled in."""
    given = {"attn_mask": None, "dropout_p": 0.0, "is_causal": False, "scale": None, "enable_gqa": False}
    return given | dict(zip(_ATTENTION_PARAMETERS, args)) | kwargs


def _on_meta(given: dict) -> bool:
    return any(getattr(given[name], "is_meta", False) for name in ("query", "key", "value", "attn_mask"))


def _cpu_picks_fused_kernel(given: dict) -> bool:
    """Whether PyTorch's CPU dispatch would run this call on its fused (flash) kernel."""
    from torch.nn.attention import SDPBackend
    from torch.utils._mode_utils import no_dispatch

    mask = given["attn_mask"]
    if mask is not None and mask.dtype not in (torch.bool, torch.float32, given["query"].dtype):
        return False  # a mask neither bool, float32 nor the query's dtype: rejected before the choice, as here
    with no_dispatch():  # real CPU stand-ins: no mode may turn them into meta tensors
        choice = torch.ops.aten._fused_sdp_choice.default(
            _stand_in(given["query"]),
            _stand_in(given["key"]),
            _stand_in(given["value"]),
            None if mask is None else _stand_in(mask),
            given["dropout_p"],
            given["is_causal"],
            scale=given["scale"],
            enable_gqa=given["enable_gqa"],
        )
    return choice == SDPBackend.FLASH_ATTENTION.value


def _stand_in(tensor):
    """A CPU tensor with `tensor`'s dtype, sizes, `requires_grad` and whether its last-dimension stride is 1, over
    at most two rows of memory: what PyTorch's choice of a CPU attention kernel reads of it (its checks read no
    values, ask of strides only whether the last is 1, and rule the fused kernel out for a mask that requires grad).
    A stride above 2 is made 2: the row of a tensor whose last dimension is outermost in memory spans the tensor."""
    sizes = tuple(tensor.shape)
    if not sizes:
        return torch.empty((), dtype=tensor.dtype).requires_grad_(tensor.requires_grad)
    last = min(tensor.stride(-1), 2)
    row = (sizes[-1] - 1) * last + 1 if sizes[-1] else 0
    made = torch.empty(row, dtype=tensor.dtype).as_strided(sizes, (0,) * (len(sizes) - 1) + (last,))
    return made.requires_grad_(tensor.requires_grad)


def _fused_cpu_kernel(given: dict):
    """What PyTorch's CPU path runs once it has picked the fused kernel: a boolean mask made additive, then the
    kernel (which takes grouped-query key and value as they are)."""
    query, mask = given["query"], given["attn_mask"]
    if mask is not None and mask.dtype == torch.bool:
        aten = torch.ops.aten  # ATen's own calls, as PyTorch's C++ makes them (no Python factory's extra ops)
        masked_out = aten.scalar_tensor.default(-math.inf, dtype=query.dtype, device=mask.device)
        mask = aten.where.ScalarSelf(mask, 0.0, masked_out)
    output, _ = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(
        query,
        given["key"],
        given["value"],
        given["dropout_p"],
        given["is_causal"],
        attn_mask=mask,
        scale=given["scale"],
    )
    return output


def _takes_math_path(given: dict) -> bool:
    """Query and value head sizes differ: no fused kernel takes the call."""
    query, value = given.get("query"), given.get("value")
    return query is not None and value is not None and query.shape[-1] != value.shape[-1]


def _python_value_reads() -> frozenset:
    return frozenset({torch.Tensor.tolist, torch.Tensor.numpy, torch.Tensor.__array__, torch.Tensor.data_ptr})


_PYTHON_VALUE_READS = _python_value_reads()
"""Tensor methods that read values into Python without an ATen call the recorder would see."""
