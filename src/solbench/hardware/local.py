"""Storing the local CPU probe and turning it into a HardwareSpec for `--hardware local`."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from solbench.hardware.errors import HardwareError
from solbench.hardware.probe import ProbeResult, cpu_model
from solbench.hardware.spec import EMULATED_TRANSCENDENTAL_FLOPS, HardwareSpec


def local_probe_path() -> Path:
    """$SOLBENCH_HOME/hardware/local.json, or under $XDG_CACHE_HOME (default ~/.cache)/solbench."""
    home = os.environ.get("SOLBENCH_HOME")
    base = Path(home) if home else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "solbench"
    return base / "hardware" / "local.json"


def save_probe(result: ProbeResult, path: Path | None = None) -> Path:
    path = path or local_probe_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(result), indent=2))
    return path


def load_probe(path: Path | None = None) -> ProbeResult:
    path = path or local_probe_path()
    if not path.exists():
        raise HardwareError(f"no local hardware probe at {path}; run `solbench hw probe` first")
    try:
        result = ProbeResult(**json.loads(path.read_text()))
    except (ValueError, TypeError) as error:
        raise HardwareError(f"{path}: not a probe result ({error}); run `solbench hw probe` again") from None
    if result.cpu_model != cpu_model():
        raise HardwareError(f"{path} was measured on {result.cpu_model!r}, this machine is {cpu_model()!r}; "
                            "run `solbench hw probe` again")
    return result


def spec_from_probe(result: ProbeResult) -> HardwareSpec:
    """Matrix work of any float dtype may run at the fp32 rate (convert, multiply): the rate is the best of both."""
    fp32 = result.matmul_flops["float32"]
    tensor = {dtype: max(rate, fp32) for dtype, rate in result.matmul_flops.items() if dtype != "float64"}
    tensor["float64"] = result.matmul_flops["float64"]
    for narrow in ("float8", "float4", "int8"):
        tensor[narrow] = max(tensor.get("bfloat16", fp32), tensor.get("float16", fp32))
    vector = {"float32": fp32, "float64": result.matmul_flops["float64"]}
    bandwidth_kernel = max(result.bandwidth_bytes_per_s, key=result.bandwidth_bytes_per_s.get)
    measured = f"measured by `solbench hw probe` on {result.cpu_model}"
    sources = {"memory_bandwidth_bytes_per_s": f"{measured} (best kernel: {bandwidth_kernel})",
               **{f"tensor.{d}": f"{measured} (best square matmul)" for d in tensor},
               "cuda_core.float32": f"{measured} (elementwise work cannot beat the fp32 FMA rate of a large matmul)",
               "special": f"fp32 rate / {EMULATED_TRANSCENDENTAL_FLOPS} (vectorised polynomial transcendentals)"}
    return HardwareSpec(id="local", name=f"local CPU: {result.cpu_model} ({result.cores} cores)", kind="cpu",
                        memory_bandwidth_bytes_per_s=result.bandwidth_bytes_per_s[bandwidth_kernel],
                        tensor_flops=tensor, vector_flops=vector,
                        special_ops_per_s=fp32 / EMULATED_TRANSCENDENTAL_FLOPS,
                        cache_bytes=float(max(result.cache_bytes.values(), default=0)), sources=sources)


def load_local_spec() -> HardwareSpec:
    return spec_from_probe(load_probe())
