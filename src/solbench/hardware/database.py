"""The hardware database: data files shipped with solbench, looked up by id or alias, any case."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from solbench.hardware.errors import HardwareError
from solbench.hardware.local import LOCAL_ID, load_local_spec
from solbench.hardware.spec import (
    EMULATED_TRANSCENDENTAL_FLOPS,
    SPECIAL_OPS_PER_CLOCK_PER_SM,
    DeviceFile,
    Figure,
    HardwareSpec,
)


def _data_files() -> list[Path]:
    folder = resources.files("solbench.hardware") / "data"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".json"))


@lru_cache(maxsize=1)
def device_files() -> dict[str, DeviceFile]:
    """Every data file, by upper-case id; raises HardwareError naming a malformed file."""
    files = {}
    for path in _data_files():
        try:
            device = DeviceFile.model_validate(json.loads(path.read_text()))
        except (ValidationError, ValueError) as error:
            raise HardwareError(f"{path}: {error}") from None
        files[device.id.upper()] = device
    return files


def known_ids() -> list[str]:
    return [device.id for device in device_files().values()]


def lookup(hardware_id: str) -> HardwareSpec:
    """The spec for an id or alias (case-insensitive); "local" reads the stored CPU probe."""
    if hardware_id.lower() == LOCAL_ID:
        return load_local_spec()
    wanted = hardware_id.upper()
    for device in device_files().values():
        if wanted == device.id.upper() or wanted in (a.upper() for a in device.aliases):
            return resolve(device)
    raise HardwareError(f"unknown hardware {hardware_id!r} (known: {', '.join(known_ids())}, local)")


def _required(device: DeviceFile, name: str, figure: Figure | None) -> Figure:
    """A figure the data file must give; raises HardwareError naming the device and the field."""
    if figure is None:
        raise HardwareError(f"{device.id}: the data file gives no {name}")
    return figure


def resolve(device: DeviceFile) -> HardwareSpec:
    if device.derived_from:
        return _derive_locked_clock(device, device.derived_from)
    sources: dict[str, str] = {}
    tensor, vector = {}, {}
    for unit, table in (("tensor", tensor), ("cuda_core", vector)):
        for precision, figure in device.peak_flops.get(unit, {}).items():
            table[precision] = figure.value
            sources[f"{unit}.{precision}"] = figure.source
    sms = int(_required(device, "sm_count", device.sm_count).value)
    clock = _required(device, "boost_clock_mhz", device.boost_clock_mhz).value
    sfu = sms * SPECIAL_OPS_PER_CLOCK_PER_SM * clock * 1e6
    special = sfu + vector["float32"] / EMULATED_TRANSCENDENTAL_FLOPS
    sources["special"] = (
        f"derived: {sms} SMs x {SPECIAL_OPS_PER_CLOCK_PER_SM}/clock x {clock:g} MHz on the SFUs, "
        f"plus FP32 FMA emulation at {EMULATED_TRANSCENDENTAL_FLOPS} FLOPs each"
    )
    for name in ("memory_bandwidth_bytes_per_s", "l2_bytes", "memory_bytes", "sm_count", "boost_clock_mhz"):
        figure = getattr(device, name)
        if figure is not None:
            sources[name] = figure.source
    return HardwareSpec(
        id=device.id,
        name=device.name,
        kind=device.kind,
        memory_bandwidth_bytes_per_s=_required(
            device, "memory_bandwidth_bytes_per_s", device.memory_bandwidth_bytes_per_s
        ).value,
        tensor_flops=tensor,
        vector_flops=vector,
        special_ops_per_s=special,
        cache_bytes=device.l2_bytes.value if device.l2_bytes else 0.0,
        memory_bytes=device.memory_bytes.value if device.memory_bytes else 0.0,
        sm_count=sms,
        sm_clock_mhz=clock,
        sources=sources,
        aliases=tuple(device.aliases),
    )


def _derive_locked_clock(device: DeviceFile, derived_from: str) -> HardwareSpec:
    """Scale every compute peak by locked clock / the clock it was quoted at; memory is unchanged."""
    base_file = device_files().get(derived_from.upper())
    if base_file is None:
        raise HardwareError(f"{device.id}: derived_from {derived_from!r} is not in the database")
    base = resolve(base_file)
    locked_figure = _required(device, "locked_sm_clock_mhz", device.locked_sm_clock_mhz)
    locked = locked_figure.value
    boost_figure = _required(base_file, "boost_clock_mhz", base_file.boost_clock_mhz)
    tensor_clock = (base_file.tensor_clock_mhz or boost_figure).value
    boost = boost_figure.value
    tensor = {p: v * locked / tensor_clock for p, v in base.tensor_flops.items()}
    vector = {p: v * locked / boost for p, v in base.vector_flops.items()}
    scale_note = (
        f"derived: {base.id} x {locked:g} MHz / quoted clock ({tensor_clock:g} MHz tensor, {boost:g} MHz CUDA core)"
    )
    scaled = ("tensor.", "cuda_core.", "special")
    sources = {
        key: f"{scale_note}; {value}" if key.startswith(scaled) else value for key, value in base.sources.items()
    }
    sources["locked_sm_clock_mhz"] = locked_figure.source
    return HardwareSpec(
        id=device.id,
        name=device.name,
        kind=base.kind,
        memory_bandwidth_bytes_per_s=base.memory_bandwidth_bytes_per_s,
        tensor_flops=tensor,
        vector_flops=vector,
        special_ops_per_s=base.special_ops_per_s * locked / boost,
        cache_bytes=base.cache_bytes,
        memory_bytes=base.memory_bytes,
        sm_count=base.sm_count,
        sm_clock_mhz=locked,
        sources=sources,
        aliases=tuple(device.aliases),
    )
