"""What the CUDA timers share: the device they time on and when they can run."""

from __future__ import annotations


class CudaTimerBase:
    name = "cuda"
    device_kind = "cuda"

    def __init__(self, device: str = "cuda"):
        import torch

        self.device = torch.device(device)

    @staticmethod
    def is_available(device: str) -> bool:
        if not device.startswith("cuda"):
            return False
        import torch

        return torch.cuda.is_available()
