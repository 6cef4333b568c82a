"""A reference's source as it runs on the CPU: the CUDA device it names replaced, NVFP4 products emulated.

Upstream references are written for a GPU: some name ``'cuda'`` themselves, and the NVFP4 ones call
`torch._scaled_mm` with block scales that torch's CPU build refuses. On the CPU the source is
rewritten, never torch: device literals become ``'cpu'``, and `torch._scaled_mm` becomes the exact
emulation in `spec.nvfp4` (which hands every other call back to torch). The analyzer uses only the
device rewrite (it must still see `_scaled_mm` to count its FLOPs).
"""

from __future__ import annotations

import ast
import re

_CUDA_LITERAL = re.compile(r"""(["'])cuda(:\d+)?\1""")
_CUDA_CALL = re.compile(r"\.cuda\(\)")
_SCALED_MM = re.compile(r"\btorch\._scaled_mm\b")
_COMPARED_BEFORE = re.compile(r"(==|!=|\bin|\bis)\s*$")
_COMPARED_AFTER = re.compile(r"^\s*(==|!=)")
EMULATION_NAME = "_solbench_cpu_scaled_mm"
"""The name the rewritten reference calls instead of `torch._scaled_mm`."""
TRUSTED_EMULATION_MODULE = "solbench.spec.nvfp4"
"""Where the trusted reference (run by the evaluator in its own process) imports the emulation from."""
SOLUTION_EMULATION_MODULE = "nvfp4_emulation"
"""The file name (without .py) under which a solution ships the emulation as one of its sources."""


def cpu_reference_source(source: str) -> str:
    """The reference with the CUDA device it names replaced by the CPU, so that it analyses without one.

    Only device literals (`"cuda"`, `'cuda:0'`) and `.cuda()` calls change: the analysis needs the
    ops, not where they would run. A literal compared with (``x.device.type == "cuda"``) stays, so a branch
    for the GPU is not taken on the CPU."""

    def replace(match: re.Match) -> str:
        before, after = source[max(0, match.start() - 8) : match.start()], source[match.end() : match.end() + 8]
        if _COMPARED_BEFORE.search(before) or _COMPARED_AFTER.match(after):
            return match.group(0)
        return f"{match.group(1)}cpu{match.group(1)}"

    return _CUDA_CALL.sub(".cpu()", _CUDA_LITERAL.sub(replace, source))


def uses_scaled_mm(source: str) -> bool:
    return bool(_SCALED_MM.search(source))


def cpu_runnable_source(source: str, emulation_module: str = TRUSTED_EMULATION_MODULE) -> str:
    """`cpu_reference_source`, and `torch._scaled_mm` calls routed to `emulation_module`'s `scaled_mm`.

    The import goes after any ``from __future__`` lines (which must stay first); sources that never
    call `torch._scaled_mm` get only the device rewrite.
    """
    source = cpu_reference_source(source)
    if not uses_scaled_mm(source):
        return source
    source = _SCALED_MM.sub(EMULATION_NAME, source)
    header = f"from {emulation_module} import scaled_mm as {EMULATION_NAME}  # NVFP4 on the CPU (solbench)\n"
    lines = source.splitlines(keepends=True)
    at = _after_future_imports(source)
    return "".join(lines[:at]) + header + "".join(lines[at:])


def _after_future_imports(source: str) -> int:
    """The line index after the last ``from __future__`` import (which may span lines), or 0."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return 0  # the reference's own import reports the error
    ends = [
        node.end_lineno
        for node in body
        if isinstance(node, ast.ImportFrom) and node.module == "__future__" and node.end_lineno is not None
    ]  # ast.parse sets every end position
    return max(ends, default=0)
