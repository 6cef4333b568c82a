"""Marks each module's forward in the profile, so every ATen op knows which model part issued it.

A forward pre-hook opens a profiler range ``reach.module: ClassName`` and the forward hook closes it.
The op families (families.py) read the innermost such range: an ``aten::mul`` inside ``LlamaRMSNorm`` is
RMSNorm time, the same op inside ``LowRankCrossNet`` is DCN cross time. Hooks rather than
``with_stack=True``: the Python tracer costs more than the ops being timed on small models.
"""

from __future__ import annotations

from contextlib import contextmanager

MODULE_PREFIX = "reach.module: "


@contextmanager
def module_ranges(model):
    """Install the hooks on every sub-module of ``model`` for the duration of the block."""
    import torch

    open_ranges: list = []

    def enter(module, args):
        record = torch.autograd.profiler.record_function(MODULE_PREFIX + type(module).__name__)
        record.__enter__()
        open_ranges.append(record)

    def leave(module, args, output):
        if open_ranges:
            open_ranges.pop().__exit__(None, None, None)

    handles = []
    for module in model.modules():
        handles.append(module.register_forward_pre_hook(enter))
        handles.append(module.register_forward_hook(leave))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
        while open_ranges:
            open_ranges.pop().__exit__(None, None, None)
