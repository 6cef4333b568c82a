"""Which library versions an extraction ran with, recorded in the problem's tags.

An extracted reference is what ``torch.export`` made of transformers' module code on the day it ran:
a new transformers (a renamed class, a reordered op) or torch (a new decomposition) can change it. The
tags ``extracted-with:transformers=5.25.0`` and ``extracted-with:torch=2.13.0`` let a reader, and the
freshness test, tell such drift from a change in solbench.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata

PROVENANCE_KEY = "extracted-with"
LIBRARIES = ("transformers", "torch")
"""The libraries whose code becomes the reference: transformers' module, torch's export and decompositions."""


def installed_versions() -> dict[str, str]:
    """Each library's installed version, without a local build label (``2.13.0+cpu`` is ``2.13.0``)."""
    versions = {}
    for library in LIBRARIES:
        try:
            versions[library] = metadata.version(library).split("+")[0]
        except metadata.PackageNotFoundError:
            continue
    return versions


def provenance_tags(versions: dict[str, str]) -> list[str]:
    return [f"{PROVENANCE_KEY}:{library}={version}" for library, version in versions.items()]


def recorded_versions(tags: Iterable[object]) -> dict[str, str]:
    """The versions a definition's tags record (empty for problems extracted before they were recorded)."""
    prefix = f"{PROVENANCE_KEY}:"
    pairs = (t.removeprefix(prefix).partition("=") for t in tags if isinstance(t, str) and t.startswith(prefix))
    return {library: version for library, _, version in pairs if version}
