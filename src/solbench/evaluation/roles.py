"""Which inputs timing may perturb, decided from their names and roles (spec/input_roles.py).

Timing's rotation (sandbox/rotation.py) must touch only data, never indices, scales or zero
points: a kernel may rely on them being exact.
"""

from __future__ import annotations

import re

from solbench.sandbox.rotation import Perturbation, has_sign_bits
from solbench.spec.definition import Definition, TensorSpec
from solbench.spec.dtypes import lookup_dtype
from solbench.spec.input_roles import name_matches, name_words, role_of

_ZERO_POINT_WORDS = ("zero", "zeros", "qzeros", "zp", "zps", "azp", "zero_point", "zero_points")
_PACKED_WEIGHT_WORDS = ("qweight", "q_weight", "qweights")  # AWQ / GPTQ / exllama / Marlin names for packed int4
_MASK_WORDS = ("mask", "masks", "flag", "flags")


def is_scale(name: str) -> bool:
    """A scale by name (`a_scale`, `w_scales`, `x_scale_inv`, `q_descale`, NVFP4's `a_sf`): timing never flips
    its signs, as kernels may rely on scales being positive."""
    return "scale" in name.lower() or any(w in ("sf", "sfa", "sfb") for w in name_words(name))


def is_zero_point(name: str) -> bool:
    """A quantization zero point by name (`qzeros`, `a_zp`, `zero_points`): timing keeps it exact."""
    return name_matches(name, _ZERO_POINT_WORDS)


def _says_4bit(tensor: TensorSpec) -> bool:
    return re.search(r"\b(u?int4|4-bit|nibbles?)\b", tensor.description or "", re.IGNORECASE) is not None


def timing_perturbation(name: str, tensor: TensorSpec, definition: Definition) -> Perturbation:
    """How timing makes input `name` unique per iteration (see sandbox/rotation.py), or ``keep``.

    Only data is touched: floats of 16 bits or more are multiplied (scales included, they stay positive);
    fp8/fp4 data gets sign flips, int8 codes negations and int4 packed into integer words (`qweight`, or
    described as 4-bit) nibble complements. Scales of 8 bits, zero points, masks and every integer with a
    role (indices, offsets, lengths) keep their bits, as do integers not known to be codes (`top_k`, rows).
    """
    dtype = lookup_dtype(tensor.dtype)
    if dtype.is_floating:
        if dtype.bits >= 16:
            return "multiply"
        return "flip_signs" if has_sign_bits(dtype.torch_name) and not is_scale(name) else "keep"
    if (
        dtype.kind != "int"
        or role_of(name, tensor, definition).kind != "plain"
        or is_scale(name)
        or is_zero_point(name)
        or name_matches(name, _MASK_WORDS)
    ):
        return "keep"
    if dtype.name == "int8" and not _says_4bit(tensor):
        return "negate"
    if name_matches(name, _PACKED_WEIGHT_WORDS) or _says_4bit(tensor):
        return "complement_nibbles"
    return "keep"


def timing_perturbations(definition: Definition) -> list[Perturbation]:
    """Per input, in order: its `timing_perturbation`, sent to the sandbox with the input sets."""
    return [timing_perturbation(name, tensor, definition) for name, tensor in definition.inputs.items()]
