"""What an input is, decided from its name and description: value ranges for random inputs, and
which inputs timing may perturb.

Plain random numbers make some problems meaningless (negative indices, unsorted offsets,
negative variances). Each rule here names the role it recognises; README "Inputs" lists them.
Timing's rotation must likewise touch only data, never indices, scales or zero points.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from solbench.sandbox.rotation import Perturbation, has_sign_bits
from solbench.spec.definition import Definition, TensorSpec
from solbench.spec.dtypes import lookup_dtype

_INDEX_WORDS = ("idx", "index", "indices", "ids", "token", "position", "positions", "label", "labels",
                "expert", "slot", "page", "block_table", "mapping", "topk")
_OFFSET_WORDS = ("indptr", "offsets", "cu_seqlens", "seq_starts", "seqlens_cumsum")
_POSITIVE_WORDS = ("var", "variance", "std", "rstd", "sigma", "scale", "scales", "temperature", "eps",
                   "lengths", "seqlen", "seq_lens")
_PROBABILITY_WORDS = ("probs", "prob", "probabilities")
_ZERO_POINT_WORDS = ("zero", "zeros", "qzeros", "zp", "zps", "azp", "zero_point", "zero_points")
_PACKED_WEIGHT_WORDS = ("qweight", "q_weight", "qweights")  # AWQ / GPTQ / exllama / Marlin names for packed int4
_MASK_WORDS = ("mask", "masks", "flag", "flags")
# Which axis bounds an index input, tried in order when the description names none.
_BOUND_AXES = (
    (("expert",), ("num_experts", "n_experts", "n_routed_experts", "num_local_experts", "experts")),
    (("token", "input_ids", "vocab", "label"), ("vocab_size", "vocab", "num_embeddings", "num_classes")),
    (("page", "kv_ind", "block_table"), ("num_pages", "num_blocks", "total_pages")),
    (("position", "pos"), ("max_position_embeddings", "max_seq_len", "seq_len", "max_len")),
    (("slot",), ("num_slots", "num_tokens")),
)


@dataclass(frozen=True)
class Role:
    kind: str
    """``index``, ``offsets``, ``positive``, ``probability`` or ``plain``."""
    bound_axis: str | None = None
    """For an index: the axis its values stay below (None: the fallback rule)."""
    total_axis: str | None = None
    """For offsets: the axis equal to the last offset, from a constraint."""


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]


def _matches(name: str, vocabulary: tuple[str, ...]) -> bool:
    lowered = name.lower()
    words = _words(name)
    return any(v in words or lowered.endswith(v) or lowered.endswith("_" + v) for v in vocabulary)


def role_of(name: str, tensor: TensorSpec, definition: Definition) -> Role:
    if tensor.dtype.startswith(("int", "uint")):
        if _matches(name, _OFFSET_WORDS):
            return Role("offsets", total_axis=_total_axis_from_constraints(name, definition))
        if _matches(name, _INDEX_WORDS):
            return Role("index", bound_axis=_bound_axis(name, tensor, definition))
        if _matches(name, ("lengths", "seq_lens", "seqlens")):
            return Role("positive")
        return Role("plain")
    if tensor.dtype.startswith(("float", "bfloat")):
        if _matches(name, _PROBABILITY_WORDS):
            return Role("probability")
        if _matches(name, _POSITIVE_WORDS):
            return Role("positive")
    return Role("plain")


def is_scale(name: str) -> bool:
    """A scale by name (`a_scale`, `w_scales`, `x_scale_inv`, `q_descale`, NVFP4's `a_sf`): timing never flips
    its signs, as kernels may rely on scales being positive."""
    return "scale" in name.lower() or any(w in ("sf", "sfa", "sfb") for w in _words(name))


def is_zero_point(name: str) -> bool:
    """A quantization zero point by name (`qzeros`, `a_zp`, `zero_points`): timing keeps it exact."""
    return _matches(name, _ZERO_POINT_WORDS)


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
    if (dtype.kind != "int" or role_of(name, tensor, definition).kind != "plain" or is_scale(name)
            or is_zero_point(name) or _matches(name, _MASK_WORDS)):
        return "keep"
    if dtype.name == "int8" and not _says_4bit(tensor):
        return "negate"
    if _matches(name, _PACKED_WEIGHT_WORDS) or _says_4bit(tensor):
        return "complement_nibbles"
    return "keep"


def timing_perturbations(definition: Definition) -> list[Perturbation]:
    """Per input, in order: its `timing_perturbation`, sent to the sandbox with the input sets."""
    return [timing_perturbation(name, tensor, definition) for name, tensor in definition.inputs.items()]


def _bound_axis(name: str, tensor: TensorSpec, definition: Definition) -> str | None:
    text = tensor.description or ""
    for axis in sorted(definition.axes, key=len, reverse=True):
        if re.search(rf"(<|\[0\s*,|less than|below|within)\s*`?{re.escape(axis)}\b", text):
            return axis
    lowered = name.lower()
    for keywords, axes in _BOUND_AXES:
        if any(k in lowered for k in keywords):
            for axis in axes:
                if axis in definition.axes:
                    return axis
    return None


def _total_axis_from_constraints(name: str, definition: Definition) -> str | None:
    pattern = re.compile(rf"^\s*(\w+)\s*==\s*{re.escape(name)}\[-1\](\.item\(\))?\s*$")
    for constraint in definition.constraints:
        match = pattern.match(constraint)
        if match and match.group(1) in definition.axes:
            return match.group(1)
    return None
