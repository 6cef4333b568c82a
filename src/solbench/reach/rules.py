"""Which ops are vendor-tuned and which are addressable: the documented, overridable classification.

An op is **vendor-tuned** when a vendor library already ships a tuned kernel for it that a kernel author
rarely beats (GEMM in cuBLAS/oneDNN, convolution in cuDNN/oneDNN, fused attention in FlashAttention /
cuDNN SDPA, collectives in NCCL); everything else an ATen op does is **addressable**: the element-wise,
normalisation, embedding, interaction and optimiser kernels a kernel author can write and fuse. Self
time of records that are not ATen ops (autograd engine nodes, optimiser ranges, Python) is **framework**
overhead, neither. Rules:

1. an op whose name matches a pattern of ``addressable`` is addressable (overrides everything below);
2. an op inside a vendor-tuned op (``aten::copy_`` under ``aten::linear``, ``aten::reshape`` under
   ``aten::matmul``) takes the class of its outermost vendor-tuned ancestor: the glue is part of the call;
3. an op whose name matches a pattern of a vendor class is in that class;
4. any other ``aten::`` op is addressable, any other record framework.

Patterns are ``fnmatch`` globs over profiler names. A rules file (``--rules FILE.json``) replaces the
patterns of the classes it names: ``{"classes": {"embedding": ["aten::*embedding_bag*"]}, "addressable": []}``
would count embedding bags as vendor-tuned (FBGEMM's table-batched embedding, say).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path

from solbench.json_files import read_json_file
from solbench.reach.errors import ReachError

ADDRESSABLE = "addressable"
FRAMEWORK = "framework"

VENDOR_CLASSES: dict[str, tuple[str, ...]] = {
    "gemm": (
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::baddbmm",
        "aten::addbmm",
        "aten::linear",
        "aten::matmul",
        "aten::_addmm_activation",
        "aten::addmv",
        "aten::mv",
        "aten::_scaled_mm",
        "aten::_int_mm",
        "aten::_grouped_mm",
        "aten::_scaled_grouped_mm",
        "aten::dot",
    ),
    "convolution": (
        "aten::convolution",
        "aten::_convolution",
        "aten::conv1d",
        "aten::conv2d",
        "aten::conv3d",
        "aten::conv_transpose*",
        "aten::*convolution*",
        "aten::_slow_conv*",
        "aten::_nnpack*",
    ),
    "attention": (
        "aten::scaled_dot_product_attention",
        "aten::_scaled_dot_product_*attention*",
        "aten::_flash_attention_*",
        "aten::_efficient_attention_*",
        "aten::_cudnn_attention*",
    ),
    "collective": ("c10d::*", "nccl:*", "gloo:*", "aten::_c10d_functional*", "_c10d_functional::*"),
}


@dataclass(frozen=True)
class Rules:
    """Vendor classes (name -> patterns) and the patterns forced addressable."""

    classes: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(VENDOR_CLASSES))
    addressable: tuple[str, ...] = ()

    def vendor_class(self, name: str) -> str | None:
        if any(fnmatchcase(name, p) for p in self.addressable):
            return None
        for cls, patterns in self.classes.items():
            if any(fnmatchcase(name, p) for p in patterns):
                return cls
        return None

    def classify(self, name: str, ancestors: tuple[str, ...]) -> str:
        """The class of one op given the names of its enclosing ops (outermost first)."""
        if any(fnmatchcase(name, p) for p in self.addressable):
            return ADDRESSABLE
        for ancestor in ancestors:
            cls = self.vendor_class(ancestor)
            if cls:
                return cls
        cls = self.vendor_class(name)
        if cls:
            return cls
        return ADDRESSABLE if name.startswith("aten::") else FRAMEWORK

    def as_json(self) -> dict:
        return {"classes": {k: list(v) for k, v in self.classes.items()}, "addressable": list(self.addressable)}

    def merged(self, classes: Mapping[str, list[str]] | None = None, addressable: list[str] | None = None) -> Rules:
        """These rules with the named classes' patterns replaced (an empty list drops a class)."""
        merged = dict(self.classes)
        for cls, patterns in (classes or {}).items():
            if patterns:
                merged[cls] = tuple(patterns)
            else:
                merged.pop(cls, None)
        return replace(
            self, classes=merged, addressable=tuple(addressable) if addressable is not None else self.addressable
        )


DEFAULT_RULES = Rules()


def load_rules(path: Path | None) -> Rules:
    """The default rules, or those of ``path`` merged over them."""
    if path is None:
        return DEFAULT_RULES
    data = read_json_file(path, "rules file", ReachError)
    if not isinstance(data, dict) or set(data) - {"classes", "addressable", "op_types"}:
        raise ReachError(
            f"{path}: expected an object with 'classes' (class -> list of op-name globs), "
            "'addressable' (list of globs) and/or 'op_types' (family -> list of suite op_types)"
        )
    classes = data.get("classes", {})
    if not isinstance(classes, dict) or not all(
        isinstance(v, list) and all(isinstance(p, str) for p in v) for v in classes.values()
    ):
        raise ReachError(f"{path}: 'classes' must map a class name to a list of op-name globs")
    if ADDRESSABLE in classes or FRAMEWORK in classes:
        raise ReachError(f"{path}: 'classes' names vendor classes; '{ADDRESSABLE}' is the 'addressable' list")
    addressable = data.get("addressable")
    if addressable is not None and not (isinstance(addressable, list) and all(isinstance(p, str) for p in addressable)):
        raise ReachError(f"{path}: 'addressable' must be a list of op-name globs")
    return DEFAULT_RULES.merged(classes, addressable)


def load_op_type_overrides(path: Path | None) -> dict[str, tuple[str, ...]]:
    """The ``op_types`` section of a rules file (family -> suite op_types), or nothing."""
    if path is None:
        return {}
    data = read_json_file(path, "rules file", ReachError)
    op_types = data.get("op_types", {}) if isinstance(data, dict) else {}
    if not isinstance(op_types, dict) or not all(isinstance(v, list) for v in op_types.values()):
        raise ReachError(f"{path}: 'op_types' must map an op family to a list of suite op_types")
    return {k: tuple(v) for k, v in op_types.items()}
