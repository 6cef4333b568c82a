"""Files written whole or not at all, for the caches several processes share: a reader sees the old file, the new
one, or none, never a part. The data goes to a temporary file beside the target (0644, so that other users of a
shared cache can read it; flushed to disk), which a rename or a link then puts in place."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def write_whole(path: Path, data: bytes) -> str | None:
    """Put `data` at `path` (replacing what is there) atomically and durably. None when written, else why not."""
    try:
        with written_beside(path, data) as temporary:
            os.replace(temporary, path)
        sync_folder(path.parent)
    except OSError as error:
        return f"cannot write the entry ({error.strerror or error})"
    return None


@contextmanager
def written_beside(path: Path, data: bytes) -> Iterator[Path]:
    """A temporary file in `path`'s folder (made where missing) holding `data`, for the caller to rename or link to
    `path`; removed afterwards where it is still there. Raises OSError where it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:16]}.", suffix=".tmp")
    temporary = Path(name)
    try:
        os.fchmod(descriptor, 0o644)  # mkstemp's 0600 would hide entries from other users of a shared cache
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        yield temporary
    finally:
        temporary.unlink(missing_ok=True)


def sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (best effort: not every file system lets a folder be synced)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
