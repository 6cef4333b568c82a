"""Reading SOL-ExecBench's data set, as parquet files or as problem folders, into one record per problem.

The data set is four parquet files (``data/L1.parquet``, ``data/L2.parquet``, ``data/Quant.parquet``,
``data/FlashInfer-Bench.parquet``), one row per problem with the columns in `COLUMNS`; ``axes``,
``inputs``, ``outputs`` and ``workloads`` hold JSON text. Problem folders (``<subset>/<NNN_name>/``
with definition.json, workload.jsonl and, where fetched with its published figures, metadata.json)
read the same. pyarrow is imported only when a parquet file is read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solbench.suite.importer.errors import ImportSourceError

COLUMNS = (
    "name",
    "description",
    "hf_id",
    "axes",
    "inputs",
    "outputs",
    "reference",
    "workloads",
    "custom_inputs_entrypoint",
)
JSON_COLUMNS = ("axes", "inputs", "outputs", "workloads")
SUBSETS = ("L1", "L2", "Quant", "FlashInfer-Bench")
_INDEXED = re.compile(r"^(\d+)_")


@dataclass(frozen=True)
class UpstreamProblem:
    """One problem as the data set gives it, before it is written as a solbench problem folder."""

    subset: str
    """The data set's subset name (``L1``, ``FlashInfer-Bench``, …)."""
    index: int
    """The problem's index in its subset (1-based, as in its name ``018_…``)."""
    source: str
    """Where it was read: ``data/L1.parquet row 6`` or the problem folder."""
    definition: dict[str, Any]
    """definition.json's content, upstream field names and order."""
    workload_lines: tuple[str, ...]
    """workload.jsonl's lines as written (a folder's file line for line; a parquet cell one object a line)."""
    metadata: dict[str, Any] | None = None
    """metadata.json (subset, index, published `sol` figures) where the source has one."""
    metadata_text: str | None = None
    """metadata.json as the folder holds it, copied unchanged."""

    @property
    def name(self) -> str:
        return str(self.definition.get("name", ""))


def read_source(path: Path) -> list[UpstreamProblem]:
    """Every problem under `path`: a .parquet file, a folder holding parquet files (or data/*.parquet),
    or a folder of problem folders (or one problem folder)."""
    path = Path(path)
    if path.is_file() and path.suffix == ".parquet":
        return read_parquet(path)
    if not path.is_dir():
        raise ImportSourceError(
            f"{path}: no such file or folder (expected SOL-ExecBench's data set: a .parquet "
            "file, a folder with data/*.parquet, or problem folders)"
        )
    parquets = sorted(path.glob("data/*.parquet")) or sorted(path.glob("*.parquet"))
    if parquets:
        return [problem for file in _subset_order(parquets) for problem in read_parquet(file)]
    folders = sorted(p.parent for p in path.glob("**/definition.json"))
    if not folders:
        raise ImportSourceError(
            f"{path}: no parquet files (data/*.parquet) and no problem folders (definition.json) here"
        )
    return [read_folder(folder, path) for folder in folders]


def read_parquet(path: Path) -> list[UpstreamProblem]:
    """One record per row of a subset's parquet file; the subset is the file's name (``L1.parquet``)."""
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise ImportSourceError(
            f"{path}: reading parquet files needs pyarrow: pip install 'solbench[import]'"
        ) from None
    try:
        table = parquet.read_table(path)
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise ImportSourceError(f"{path}: not a readable parquet file: {error}") from None
    missing = [c for c in COLUMNS if c not in table.column_names and c not in ("hf_id", "custom_inputs_entrypoint")]
    if missing:
        raise ImportSourceError(
            f"{path}: column {missing[0]!r} missing (SOL-ExecBench's columns: {', '.join(COLUMNS)})"
        )
    problems = []
    for row_number, row in enumerate(table.to_pylist()):
        problems.append(_from_row(path, row_number, row))
    return problems


def _from_row(path: Path, row_number: int, row: dict[str, Any]) -> UpstreamProblem:
    where = f"{path} row {row_number}"
    cells = {}
    for column in JSON_COLUMNS:
        value = row.get(column)
        try:
            cells[column] = json.loads(value) if isinstance(value, (str, bytes)) else value
        except json.JSONDecodeError as error:
            raise ImportSourceError(f"{where}: {column}: invalid JSON: {error.msg} (column {error.colno})") from None
    if not isinstance(cells["workloads"], list):
        raise ImportSourceError(f"{where}: workloads: expected a JSON list of workload objects")
    name = str(row.get("name") or "")
    if not name:
        raise ImportSourceError(f"{where}: name: empty")
    definition: dict[str, Any] = {"name": name}
    if row.get("hf_id"):
        definition["hf_id"] = row["hf_id"]
    definition.update(
        description=row.get("description"),
        axes=cells["axes"],
        custom_inputs_entrypoint=row.get("custom_inputs_entrypoint"),
        inputs=cells["inputs"],
        outputs=cells["outputs"],
        reference=row.get("reference"),
    )
    lines = tuple(json.dumps(workload) for workload in cells["workloads"])
    return UpstreamProblem(
        subset=path.stem, index=_index(name, row_number + 1), source=where, definition=definition, workload_lines=lines
    )


def read_folder(folder: Path, root: Path) -> UpstreamProblem:
    """A problem folder; its subset from metadata.json, else the folder above it (below `root`)."""
    definition_path = folder / "definition.json"
    definition = _read_json(definition_path)
    if not isinstance(definition, dict):
        raise ImportSourceError(f"{definition_path}: expected a JSON object")
    workload_path = folder / "workload.jsonl"
    lines = tuple(_read_text(workload_path).splitlines())
    metadata_path = folder / "metadata.json"
    metadata = _read_json(metadata_path) if metadata_path.is_file() else None
    metadata = metadata if isinstance(metadata, dict) else None
    subset = (metadata or {}).get("subset") or (folder.parent.name if folder != root else "")
    index = (metadata or {}).get("collection_index")
    name = str(definition.get("name") or folder.name)
    return UpstreamProblem(
        subset=str(subset or "all"),
        index=index if isinstance(index, int) else _index(folder.name, _index(name, 0)),
        source=str(folder),
        definition=definition,
        workload_lines=lines,
        metadata=metadata,
        metadata_text=_read_text(metadata_path) if metadata else None,
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ImportSourceError(f"{path}: file not found") from None
    except UnicodeDecodeError as error:
        raise ImportSourceError(f"{path}: not UTF-8 text (byte {error.start}: {error.reason})") from None
    except OSError as error:
        raise ImportSourceError(f"{path}: cannot read: {error.strerror or error}") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as error:
        raise ImportSourceError(f"{path}:{error.lineno}: invalid JSON: {error.msg} (column {error.colno})") from None


def _index(name: str, fallback: int) -> int:
    """The upstream index a name starts with (``018_mla…`` -> 18), else `fallback`."""
    match = _INDEXED.match(name)
    return int(match.group(1)) if match else fallback


def _subset_order(files: list[Path]) -> list[Path]:
    """The data set's subsets in its own order (L1, L2, Quant, FlashInfer-Bench), others after."""
    return sorted(files, key=lambda f: (SUBSETS.index(f.stem) if f.stem in SUBSETS else len(SUBSETS), f.stem))
