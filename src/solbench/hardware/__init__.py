"""Hardware: the spec database (data files, a source per number) and the local-CPU probe."""

from solbench.hardware.database import LOCAL_ID, device_files, known_ids, lookup, resolve
from solbench.hardware.errors import HardwareError
from solbench.hardware.spec import HardwareSpec

__all__ = ["HardwareError", "HardwareSpec", "LOCAL_ID", "device_files", "known_ids", "lookup", "resolve"]
