"""Reaching into another library's internals from a test, with a message that says what moved.

Some tests compare a reference with the model code it was taken from (transformers' Mamba2 norm, its
RoPE helpers). Those names are internal and get renamed between releases. These helpers skip only where
the library is not installed at all; where it is installed but lacks every known name, the test fails
naming the installed version and the version in requirements/lock.txt that the test holds for, so the
reader knows to add the new name rather than hunt for a numerical bug.
"""

from __future__ import annotations

import importlib
import re
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

LOCK = Path(__file__).resolve().parents[1] / "requirements" / "lock.txt"


def locked_version(package: str) -> str | None:
    """The version requirements/lock.txt pins for `package`, or None."""
    if not LOCK.is_file():
        return None
    match = re.search(rf"^{re.escape(package)}==([^\s;]+)", LOCK.read_text(), re.MULTILINE | re.IGNORECASE)
    return match.group(1) if match else None


def _versions(package: str) -> str:
    try:
        installed = metadata.version(package)
    except metadata.PackageNotFoundError:
        installed = "not installed"
    return (
        f"installed {package} {installed}; this test holds for {package} {locked_version(package)} "
        f"(requirements/lock.txt)"
    )


def library_module(name: str) -> ModuleType:
    """Import `name` (``transformers.models.mamba2.modeling_mamba2``): skip without the library, fail if it moved."""
    package = name.split(".")[0]
    pytest.importorskip(package)
    try:
        return importlib.import_module(name)
    except ImportError as error:
        pytest.fail(
            f"{name} cannot be imported ({error}); {_versions(package)}. The library moved it: "
            "point the test at its new home.",
            pytrace=False,
        )


def library_attribute(module: ModuleType, *names: str) -> Any:
    """The first of `names` that `module` defines: the current name first, then the names older releases used."""
    for name in names:
        if hasattr(module, name):
            return getattr(module, name)
    package = module.__name__.split(".")[0]
    pytest.fail(
        f"{module.__name__} has none of {', '.join(names)}; {_versions(package)}. The library renamed "
        "it: add the new name to the test.",
        pytrace=False,
    )
