"""What an input is, decided from its name and description: the value range of a random input.

Plain random numbers make some problems meaningless (negative indices, unsorted offsets,
negative variances). Each rule here names the role it recognises; docs/evaluate.md ("Inputs") lists them.
The evaluator's timing rotation reads the same roles (evaluation/roles.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from solbench.spec.definition import Definition, TensorSpec

_INDEX_WORDS = (
    "idx",
    "index",
    "indices",
    "ids",
    "token",
    "position",
    "positions",
    "label",
    "labels",
    "expert",
    "slot",
    "page",
    "block_table",
    "mapping",
    "topk",
)
_OFFSET_WORDS = ("indptr", "offsets", "cu_seqlens", "seq_starts", "seqlens_cumsum")
_POSITIVE_WORDS = (
    "var",
    "variance",
    "std",
    "rstd",
    "sigma",
    "scale",
    "scales",
    "temperature",
    "eps",
    "lengths",
    "seqlen",
    "seq_lens",
)
_PROBABILITY_WORDS = ("probs", "prob", "probabilities")
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


def name_words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]


def name_matches(name: str, vocabulary: tuple[str, ...]) -> bool:
    """True when a word of `name`, or its ending, is in `vocabulary` (``kv_indptr`` matches ``indptr``)."""
    lowered = name.lower()
    words = name_words(name)
    return any(v in words or lowered.endswith(v) or lowered.endswith("_" + v) for v in vocabulary)


def role_of(name: str, tensor: TensorSpec, definition: Definition) -> Role:
    """The role of input `name`: integers by their name (offsets, indices, lengths), floats by theirs."""
    if tensor.dtype.startswith(("int", "uint")):
        if name_matches(name, _OFFSET_WORDS):
            return Role("offsets", total_axis=_total_axis_from_constraints(name, definition))
        if name_matches(name, _INDEX_WORDS):
            return Role("index", bound_axis=_bound_axis(name, tensor, definition))
        if name_matches(name, ("lengths", "seq_lens", "seqlens")):
            return Role("positive")
        return Role("plain")
    if tensor.dtype.startswith(("float", "bfloat")):
        if name_matches(name, _PROBABILITY_WORDS):
            return Role("probability")
        if name_matches(name, _POSITIVE_WORDS):
            return Role("positive")
    return Role("plain")


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
