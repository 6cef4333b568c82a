"""The suite's one naming rule: ``<model slug>_<what>``, lower case, the model's words joined by hyphens and
everything after it by underscores (``llama-3-1-8b_rope_d128``, ``qwen3-30b-a3b_hf_moe_tp8``).

Recipes propose a name in whatever spelling reads well beside their code; `problem_name` rewrites it to the
rule (the draft applies it), so every folder of the suite is named the same way and its model can be read
off its name.
"""

from __future__ import annotations

import re

_PARENTHETICAL = re.compile(r"\s*\(.*?\)")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
NAME_RULE = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*(_[a-z0-9]+)+")


def model_slug(model: str) -> str:
    """``Llama-3.1-8B`` -> ``llama-3-1-8b``; ``SDXL VAE (AutoencoderKL)`` -> ``sdxl-vae``."""
    return _NOT_ALNUM.sub("-", _PARENTHETICAL.sub("", model).lower()).strip("-")


def problem_name(proposed: str, model: str) -> str:
    """`proposed` with its leading spelling of the model (``llama31_8b``, ``mistral_large_2411``) replaced by
    the model's slug; words after it joined by underscores. The leading words taken for the model are those
    found, in order, in the slug's letters (so abbreviations that skip a word still count)."""
    slug = model_slug(model)
    words = [w for w in _NOT_ALNUM.split(proposed.lower()) if w]
    joined = slug.replace("-", "")
    taken, position = 0, 0
    while taken < len(words) and (found := joined.find(words[taken], position)) >= 0:
        taken, position = taken + 1, found + len(words[taken])
    if taken == len(words):
        raise ValueError(f"{proposed}: a problem's name says what it computes after the model's name")
    return f"{slug}_{'_'.join(words[taken:])}"


def follows_rule(name: str, model: str) -> bool:
    return NAME_RULE.fullmatch(name) is not None and name.startswith(model_slug(model) + "_")
