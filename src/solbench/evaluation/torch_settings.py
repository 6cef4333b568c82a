"""The torch settings a candidate runs under, which the reference runs under too while it runs in the parent.

Low-precision outputs change with the order of accumulation: a bf16 sum split over 8 threads differs from one
split over 16 by more than some problems' tolerances allow, and so do fp32 products done in bf16 or TF32. The
reference's outputs (and T_b) are computed in the evaluator, the candidate's in a fresh sandbox process, so
both run at one thread count (the sandbox is told it through OMP_NUM_THREADS, see confinement.py) and the
evaluator drops, while it computes what the candidate is compared with, whatever numerics flags its own caller
set: a fresh sandbox has torch's defaults.

Most of these settings are the process's, not the thread's, and evaluations run side by side in threads of one
process (an agent environment's rollouts, the environment server): `running_as` is therefore held by one thread
at a time, or one evaluation's reference would be computed under another's settings, and the last to finish would
restore the settings the other found.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

_SETTINGS_TURN = threading.RLock()
"""Held by the thread running under settings of its own, for as long as it does: the settings it guards are
process-wide, so the lock is too. Re-entrant, so a thread inside may ask for (other) settings again."""


@dataclass(frozen=True)
class TorchSettings:
    """The process-wide torch settings that change what a computation returns. The defaults are torch's own,
    which a fresh sandbox has (tests/evaluation/test_reference_settings.py checks them against a process started
    as one)."""

    threads: int
    """Intra-op threads of torch's CPU pool: how sums are split."""
    float32_matmul_precision: str | None = "highest"
    """``high``/``medium`` let float32 products run in TF32 or bf16 (oneDNN on a CPU, cuBLAS on a GPU); it sets
    cuBLAS's TF32 flag with it. None: set per backend through torch's newer API, which the legacy name cannot
    read; left as the caller set it (`apply` does not touch it)."""
    deterministic_algorithms: bool = False
    deterministic_warn_only: bool = False
    cudnn_allow_tf32: bool = True
    cuda_matmul_bf16_reduced_precision_reduction: bool = True
    cuda_matmul_fp16_reduced_precision_reduction: bool = True

    @classmethod
    def current(cls) -> TorchSettings:
        """The settings of this process (the thread count of the calling thread)."""
        import torch

        matmul = torch.backends.cuda.matmul
        return cls(
            threads=torch.get_num_threads(),
            float32_matmul_precision=_float32_matmul_precision(),
            deterministic_algorithms=torch.are_deterministic_algorithms_enabled(),
            deterministic_warn_only=torch.is_deterministic_algorithms_warn_only_enabled(),
            cudnn_allow_tf32=bool(torch.backends.cudnn.allow_tf32),
            cuda_matmul_bf16_reduced_precision_reduction=bool(matmul.allow_bf16_reduced_precision_reduction),
            cuda_matmul_fp16_reduced_precision_reduction=bool(matmul.allow_fp16_reduced_precision_reduction),
        )

    def apply(self) -> None:
        """Make these the settings of this process, each set only where it differs."""
        import torch

        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        precision, wanted = _float32_matmul_precision(), self.float32_matmul_precision
        if precision is not None and wanted is not None and precision != wanted:
            torch.set_float32_matmul_precision(wanted)
        deterministic = (self.deterministic_algorithms, self.deterministic_warn_only)
        if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) != (
            deterministic
        ):
            torch.use_deterministic_algorithms(self.deterministic_algorithms, warn_only=self.deterministic_warn_only)
        matmul = torch.backends.cuda.matmul
        for owner, flag, wanted in (
            (torch.backends.cudnn, "allow_tf32", self.cudnn_allow_tf32),
            (matmul, "allow_bf16_reduced_precision_reduction", self.cuda_matmul_bf16_reduced_precision_reduction),
            (matmul, "allow_fp16_reduced_precision_reduction", self.cuda_matmul_fp16_reduced_precision_reduction),
        ):
            if bool(getattr(owner, flag)) != wanted:
                setattr(owner, flag, wanted)


def _float32_matmul_precision() -> str | None:
    """torch's float32 matmul precision, or None where backends were set apart through its newer per-backend API
    (reading the legacy name then raises)."""
    import torch

    try:
        return torch.get_float32_matmul_precision()
    except RuntimeError:
        return None


def sandbox_settings(threads: int) -> TorchSettings:
    """What a fresh sandbox started at `threads` threads runs under: torch's defaults at that count."""
    return TorchSettings(threads=threads)


def current_threads() -> int:
    """The calling thread's torch thread count: what an evaluation that names none runs at."""
    import torch

    return torch.get_num_threads()


@contextlib.contextmanager
def running_as(settings: TorchSettings) -> Iterator[None]:
    """Inside, this process runs under `settings`; what it ran under before is restored on every exit.

    Another thread asking for settings waits until this block ends, so keep it to the computation that needs them
    (not the wait for a sandbox). Threads that use torch without asking see these settings meanwhile."""
    with _SETTINGS_TURN:
        before = TorchSettings.current()
        settings.apply()
        try:
            yield
        finally:
            before.apply()
