"""Static analysis of a solution's sources: every file checked by the checker for its language."""

from __future__ import annotations

from solbench.guard.findings import Finding, Severity
from solbench.guard.native_checker import check_native
from solbench.guard.python_checker import check_python
from solbench.spec.solution import NATIVE_SUFFIXES, Solution


def check_sources(sources: list[tuple[str, str]]) -> list[Finding]:
    """Findings for (path, text) pairs; files that are neither Python nor C++/CUDA are not code."""
    findings: list[Finding] = []
    for path, text in sources:
        if path.endswith(".py"):
            findings += check_python(path, text)
        elif path.endswith(NATIVE_SUFFIXES):
            findings += check_native(path, text)
    unique = {(f.rule, f.file, f.line): f for f in findings}  # a decorator call matches twice
    return sorted(unique.values(), key=lambda f: (f.severity != Severity.BLOCK, f.file, f.line))


def check_solution(solution: Solution) -> list[Finding]:
    return check_sources([(source.path, source.content) for source in solution.sources])


def blocking(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == Severity.BLOCK]
