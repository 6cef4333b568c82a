"""What a trace records about where it was measured: device, versions, clock state."""

from __future__ import annotations

import importlib.metadata
import platform
import shutil
import subprocess
from pathlib import Path

from solbench.version import __version__


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    from solbench.hardware.probe import cpu_model

    return cpu_model()


def library_versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "solbench": __version__}
    for package in ("torch", "numpy", "triton"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    import torch

    if torch.version.cuda:
        versions["cuda"] = torch.version.cuda
    return versions


def clock_state(device: str) -> dict:
    """Clock readings where the OS or driver exposes them; `state` says whether they are pinned."""
    if device.startswith("cuda"):
        return _gpu_clock_state(device)
    governor = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if not governor.exists():
        return {"state": "unknown", "reason": "no cpufreq interface (virtual machine or container)"}
    name = governor.read_text().strip()
    return {"state": "fixed" if name in ("performance", "userspace") else "dynamic", "governor": name}


def _gpu_clock_state(device: str) -> dict:
    if shutil.which("nvidia-smi") is None:
        return {"state": "unknown", "reason": "nvidia-smi not found"}
    index = device.split(":")[1] if ":" in device else "0"
    fields = "clocks.sm,clocks.max.sm,clocks.applications.graphics,clocks.default_applications.graphics"
    try:
        text = subprocess.run(
            ["nvidia-smi", f"--id={index}", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (subprocess.SubprocessError, OSError) as error:
        return {"state": "unknown", "reason": f"nvidia-smi failed: {error}"}
    values = [v.strip() for v in text.split(",")]
    readings = dict(
        zip(("sm_clock_mhz", "max_sm_clock_mhz", "application_clock_mhz", "default_application_clock_mhz"), values)
    )
    pinned = readings.get("application_clock_mhz") != readings.get("default_application_clock_mhz")
    return {"state": "locked" if pinned else "unlocked (boost)", **readings}
