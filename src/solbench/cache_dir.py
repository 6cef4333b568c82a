"""Where solbench keeps what it measured about this machine (the CPU probe) and other caches.

One rule, so that tests and scripts can point every cache at a folder of their own:
``$SOLBENCH_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/solbench``, else ``~/.cache/solbench``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CACHE_DIR_VARIABLE = "SOLBENCH_CACHE_DIR"


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The cache folder for this environment (default: the process's); it may not exist yet.

    An empty or relative ``XDG_CACHE_HOME`` is ignored, as the XDG base-directory specification says.
    """
    environ = os.environ if environ is None else environ
    override = environ.get(CACHE_DIR_VARIABLE)
    if override:
        return Path(override).expanduser()
    xdg = environ.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "solbench"
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".cache" / "solbench"
