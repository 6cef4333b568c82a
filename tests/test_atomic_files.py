"""Files the shared caches write whole or not at all (atomic_files.py)."""

import os
import stat

import pytest

from solbench.atomic_files import write_whole, written_beside


def test_a_written_file_replaces_the_old_one_whole_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "ab" / "key.json"
    assert write_whole(path, b"first") is None
    assert write_whole(path, b"second") is None
    assert path.read_bytes() == b"second"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # readable by the other users of a shared cache
    assert sorted(p.name for p in path.parent.iterdir()) == ["key.json"]


def test_a_write_that_fails_says_why_and_keeps_the_old_file(tmp_path, monkeypatch):
    import solbench.atomic_files as atomic_files

    (tmp_path / "not-a-folder").write_bytes(b"")
    reason = write_whole(tmp_path / "not-a-folder" / "entry.json", b"new")
    assert reason is not None and reason.startswith("cannot write the entry (")
    path = tmp_path / "entry.json"
    path.write_bytes(b"old")

    def full_disk(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_files.os, "replace", full_disk)
    assert write_whole(path, b"new") == "cannot write the entry (No space left on device)"
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json", "not-a-folder"]  # no temporary left


def test_the_temporary_beside_a_file_is_removed_whatever_the_caller_does(tmp_path):
    path = tmp_path / "pin.json"
    with written_beside(path, b"pinned") as temporary:
        os.link(temporary, path)  # linked, not renamed: the temporary is still there
    with pytest.raises(RuntimeError), written_beside(path, b"again"):
        raise RuntimeError("the caller failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pin.json"]
    assert path.read_bytes() == b"pinned"
