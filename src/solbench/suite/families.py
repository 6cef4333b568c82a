"""Kernel families a problem belongs to, counted the way SOL-ExecBench's makeup is described.

A problem may carry explicit ``family:<name>`` tags (recipes written since the families were counted do);
older problems are placed by their op_type and name, by the rules below. A problem can be in several
families: an MLA decode is both ``attention`` and ``mla``, an NVFP4 MoE both ``moe`` and ``nvfp4``.
"""

from __future__ import annotations

import re

from solbench.spec.definition import Definition

FAMILIES = ("attention", "moe", "rope_kv", "mla", "nvfp4", "ssm")

_NAME_RULES = {
    "attention": re.compile(r"attention|attn|sdpa|(^|_)mla(_|$)|decoder_layer|encoder_layer|transformer_block"),
    "moe": re.compile(r"moe|expert|router"),
    "rope_kv": re.compile(r"rope|rotary|kv_cache|append_paged_kv|kv_append"),
    "mla": re.compile(r"(^|_)mla(_|$)"),
    "ssm": re.compile(r"ssm|mamba|selective_scan|delta_rule|rwkv|linear_attention|causal_conv1d|segsum"),
}
"""Matched against ``op_type`` and the problem's name, lower-cased."""

NVFP4_DTYPE = "float4_e2m1fn_x2"


def families_of(definition: Definition) -> set[str]:
    """Explicit ``family:`` tags, plus the families the op_type and name rules place the problem in."""
    found = {tag.split(":", 1)[1] for tag in definition.tags if tag.startswith("family:")}
    text = f"{definition.op_type or ''} {definition.name}".lower()
    found |= {family for family, rule in _NAME_RULES.items() if rule.search(text)}
    tensors = list(definition.inputs.values()) + list(definition.outputs.values())
    if any(tensor.dtype == NVFP4_DTYPE for tensor in tensors):
        found.add("nvfp4")
    return found
