"""`solbench suite fetch sol-execbench`: download SOL-ExecBench's data set (and the FlashInfer trace files its
FlashInfer-Bench problems read), then import it.

Where there is no network the first request fails within `timeout_s` and FetchError says what to do
instead (download elsewhere, then `suite import`): nothing is half-written. huggingface_hub is imported
only here. `HF_ENDPOINT` is honoured (read when the fetch starts, not when the package was imported).
"""

from __future__ import annotations

import os
from pathlib import Path

from solbench.suite.importer.convert import import_benchmark
from solbench.suite.importer.errors import FetchError
from solbench.suite.importer.report import ImportReport
from solbench.suite.importer.sources import read_source

DATASETS = {"sol-execbench": "nvidia/SOL-ExecBench"}
"""Benchmarks `suite fetch` knows, by the name on the command line."""
TRACE_DATASET = "flashinfer-ai/flashinfer-trace"
TRACE_PREFIX = "data/flashinfer-trace/"
"""FlashInfer-Bench workloads name their safetensors files under this folder, relative to the suite root."""
DEFAULT_ENDPOINT = "https://huggingface.co"
DOWNLOAD_FOLDER = ".download"


def fetch_benchmark(
    name: str, output: Path | str, *, revision: str | None = None, timeout_s: float = 10.0
) -> ImportReport:
    """Download benchmark `name` into OUTPUT/.download, its FlashInfer trace files into OUTPUT/data/flashinfer-trace
    (where the imported FIB problems find them), and import it into `output`."""
    if name not in DATASETS:
        raise FetchError(f"unknown benchmark {name!r} (known: {', '.join(DATASETS)})")
    try:
        import huggingface_hub
    except ImportError:
        raise FetchError(
            "suite fetch needs huggingface_hub: pip install 'solbench[import]', or download the data set "
            "yourself and run `solbench suite import`"
        ) from None
    repo = DATASETS[name]
    endpoint = os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT
    api = huggingface_hub.HfApi(endpoint=endpoint)
    output = Path(output)
    try:
        info = api.dataset_info(repo, revision=revision, timeout=timeout_s)
    except _network_errors() as error:  # no route, refused, offline mode, unknown repo or revision
        raise FetchError(_offline_advice(repo, endpoint, revision, output, error)) from None
    sha = getattr(info, "sha", None) or revision
    download = output / DOWNLOAD_FOLDER / name
    try:
        huggingface_hub.snapshot_download(
            repo,
            repo_type="dataset",
            revision=sha,
            local_dir=download,
            allow_patterns=["data/*.parquet", "README.md"],
            endpoint=endpoint,
            etag_timeout=timeout_s,
        )
        traces = trace_files(download)
        if traces:
            huggingface_hub.snapshot_download(
                TRACE_DATASET,
                repo_type="dataset",
                local_dir=output / TRACE_PREFIX,
                allow_patterns=sorted(traces),
                endpoint=endpoint,
                etag_timeout=timeout_s,
            )
    except _network_errors() as error:  # failed half-way: say how to finish it by hand
        raise FetchError(_offline_advice(repo, endpoint, sha, output, error)) from None
    return import_benchmark(download, output, revision=sha)


def trace_files(source: Path) -> set[str]:
    """The FlashInfer trace files the data set's workloads read, relative to the trace data set's root."""
    import json

    found = set()
    for problem in read_source(source):
        for line in problem.workload_lines:
            if not line.strip():
                continue
            for spec in (json.loads(line).get("inputs") or {}).values():
                path = spec.get("path") if isinstance(spec, dict) and spec.get("type") == "safetensors" else None
                if isinstance(path, str) and path.startswith(TRACE_PREFIX):
                    found.add(path.removeprefix(TRACE_PREFIX))
    return found


def _network_errors() -> tuple[type[Exception], ...]:
    """What a failed download raises: OSError (huggingface_hub's own errors), ValueError, and the HTTP client's
    HTTPError (httpx, or httpx2 which recent huggingface_hub releases use)."""
    import importlib

    errors: list[type[Exception]] = [OSError, ValueError]
    for module in ("httpx", "httpx2"):
        try:
            errors.append(importlib.import_module(module).HTTPError)
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


def _offline_advice(repo: str, endpoint: str, revision: str | None, output: Path, error: Exception) -> str:
    reason = " ".join(str(error).split())[:200] or type(error).__name__
    at = f" --revision {revision}" if revision else ""
    return (
        f"cannot download {repo} from {endpoint} ({type(error).__name__}: {reason}); where there is no network, "
        f"download it on a machine with one (`hf download {repo}{at} --repo-type dataset --local-dir "
        f"SOL-ExecBench`, and the files under blob/workloads of {TRACE_DATASET} into {output / TRACE_PREFIX}), "
        f"copy it here and run `solbench suite import SOL-ExecBench -o {output}`"
    )
