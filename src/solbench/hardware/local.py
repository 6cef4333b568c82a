"""Storing the local CPU probe and turning it into a HardwareSpec for `--hardware local`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from solbench.cache_dir import cache_dir
from solbench.hardware.errors import HardwareError
from solbench.hardware.probe import ProbeResult, cpu_model
from solbench.hardware.spec import EMULATED_TRANSCENDENTAL_FLOPS, HardwareSpec

LOCAL_ID = "local"
"""The hardware id of this CPU, measured by its probe (`--hardware local`)."""


def local_probe_path() -> Path:
    """hardware/local.json in solbench's cache folder (see `solbench.cache_dir`)."""
    return cache_dir() / "hardware" / "local.json"


def save_probe(result: ProbeResult, path: Path | None = None) -> Path:
    """Written atomically: a run that probes in parallel with another never reads half a file."""
    path = path or local_probe_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(asdict(result), indent=2))
    os.replace(partial, path)
    return path


def load_probe(path: Path | None = None) -> ProbeResult:
    path = path or local_probe_path()
    if not path.exists():
        raise HardwareError(f"no local hardware probe at {path}; run `solbench hw probe` first")
    result = _read_probe(path)
    if result.cpu_model != cpu_model():
        raise HardwareError(
            f"{path} was measured on {result.cpu_model!r}, this machine is {cpu_model()!r}; "
            "run `solbench hw probe` again"
        )
    return result


def _read_probe(path: Path) -> ProbeResult:
    try:
        return ProbeResult(**json.loads(path.read_text()))
    except (ValueError, TypeError) as error:
        raise HardwareError(f"{path}: not a probe result ({error}); run `solbench hw probe` again") from None


PROBE_TOLERANCE = 0.10
"""How far a measured matmul rate may exceed its instruction-set peak before the probe is refused: the peak counts
logical cores and the maximum clock, so an honest measurement stays well below it; 10% absorbs a clock reported a
little under the one the cores reach."""


def check_probe(result: ProbeResult) -> None:
    """Raise HardwareError when a measured rate is beyond what the CPU's own instruction set allows.

    Such a probe measured something else (a timer or clock it could not trust, a matmul that skipped work) and,
    taken as the roofline, would lower T_SOL's floor below what the CPU can do. Checked where the peaks are a
    ceiling (`ProbeResult.isa_ceiling`) and per dtype that has one; the memory bandwidth has no such figure: no
    datasheet of the CPU's memory is known here."""
    if not result.isa_ceiling:
        return
    beyond = [
        f"{dtype}: measured {measured / 1e9:.0f} GFLOP/s, instruction-set peak "
        f"{result.isa_flops[dtype] / 1e9:.0f} GFLOP/s ({result.isa_formulas.get(dtype, '')})"
        for dtype, measured in sorted(result.matmul_flops.items())
        if result.isa_flops.get(dtype) and measured > result.isa_flops[dtype] * (1 + PROBE_TOLERANCE)
    ]
    if beyond:
        raise HardwareError(
            f"the probe of {result.cpu_model} measured beyond its CPU's instruction-set peak (by more "
            f"than {PROBE_TOLERANCE:.0%}): "
            + "; ".join(beyond)
            + "; refused as a roofline: run `solbench hw probe` again on an idle machine"
        )


def spec_from_probe(result: ProbeResult) -> HardwareSpec:
    """Per dtype, the larger of the measured matmul rate and the instruction-set peak.

    Any float matrix work may also convert and run at the fp32 rate, so no dtype is slower than fp32. A probe
    that measured beyond its CPU's instruction-set peak is refused (`check_probe`, HardwareError).
    """
    check_probe(result)

    def best(dtype: str) -> tuple[float, str]:
        measured = result.matmul_flops.get(dtype, 0.0)
        peak = result.isa_flops.get(dtype, 0.0)
        if peak >= measured and peak:
            return (
                peak,
                f"instruction-set peak: {result.isa_formulas.get(dtype, '')} (measured {measured / 1e9:.0f} GFLOP/s)",
            )
        return measured, f"measured best square matmul (instruction-set peak {peak / 1e9:.0f} GFLOP/s)"

    rates = {dtype: best(dtype) for dtype in ("float32", "float64", "bfloat16", "float16", "int8")}
    fp32 = rates["float32"][0]
    tensor = {dtype: max(rate, fp32) if dtype != "float64" else rate for dtype, (rate, _) in rates.items()}
    tensor["float8"] = tensor["float4"] = max(tensor["bfloat16"], tensor["float16"])
    vector = {"float32": fp32, "float64": tensor["float64"]}
    bandwidth = result.bandwidth_bytes_per_s
    bandwidth_kernel = max(bandwidth, key=lambda kernel: bandwidth[kernel])
    where = f"`solbench hw probe` on {result.cpu_model}"
    sources = {
        "memory_bandwidth_bytes_per_s": f"measured by {where} (best kernel: {bandwidth_kernel})",
        **{f"tensor.{d}": f"{source} ({where})" for d, (_, source) in rates.items()},
        "tensor.float8": "no fp8 matrix unit: converts to the faster of bf16 and fp16",
        "tensor.float4": "no fp4 matrix unit: converts to the faster of bf16 and fp16",
        "cuda_core.float32": f"elementwise work cannot beat the fp32 FMA peak: {rates['float32'][1]}",
        "cuda_core.float64": rates["float64"][1],
        "special": f"fp32 rate / {EMULATED_TRANSCENDENTAL_FLOPS} (vectorised polynomial transcendentals)",
    }
    return HardwareSpec(
        id="local",
        name=f"local CPU: {result.cpu_model} ({result.cores} cores)",
        kind="cpu",
        memory_bandwidth_bytes_per_s=result.bandwidth_bytes_per_s[bandwidth_kernel],
        tensor_flops=tensor,
        vector_flops=vector,
        special_ops_per_s=fp32 / EMULATED_TRANSCENDENTAL_FLOPS,
        cache_bytes=float(max(result.cache_bytes.values(), default=0)),
        sources=sources,
    )


def load_local_spec() -> HardwareSpec:
    return spec_from_probe(load_probe())


@dataclass(frozen=True)
class ProbeOutcome:
    """The probe `--hardware local` uses, and whether it was measured just now (`result.seconds`: how long)."""

    result: ProbeResult
    path: Path
    measured_now: bool


def load_or_probe(progress: Callable[[str], None] = lambda message: None) -> ProbeOutcome:
    """The stored probe of this CPU, or a fresh one measured and stored now; `progress` hears why and each step.

    A missing probe, or one from another CPU, is measured again; a malformed file is an error the
    user should see (someone wrote it by hand), not something to overwrite silently.
    """
    from solbench.hardware.probe import probe

    path = local_probe_path()
    if not path.exists():
        progress(f"no probe of this CPU is stored at {path}: probing it now (`solbench hw probe`)")
    else:
        stored = _read_probe(path)
        if stored.cpu_model == cpu_model():
            return ProbeOutcome(stored, path, measured_now=False)
        progress(f"{path} was measured on {stored.cpu_model!r}: probing this CPU now (`solbench hw probe`)")
    result = probe(lambda step: progress(f"probing {step} ..."))
    check_probe(result)  # a probe beyond its CPU's instruction-set peak is refused, not stored
    save_probe(result, path)
    return ProbeOutcome(result, path, measured_now=True)


def probe_if_missing(hardware_id: str | None, progress: Callable[[str], None] = lambda message: None) -> None:
    """Before `hardware_id` is looked up: when it is `local` and no probe of this CPU is stored, probe it now.

    `progress` hears why, each step and, at the end, how long it took and where the probe is kept. Without
    this a first run on a new machine would have no T_SOL; probing takes a few seconds to a minute and
    happens once per machine (the result is kept in solbench's cache folder).
    """
    if hardware_id is None or hardware_id.lower() != LOCAL_ID:
        return
    outcome = load_or_probe(progress)
    if outcome.measured_now:
        progress(f"probed this CPU in {outcome.result.seconds:.0f} s; stored at {outcome.path}")
