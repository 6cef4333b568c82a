"""Guard: static analysis of solution sources and the catalogue of what each check stops."""

from solbench.guard.findings import Finding, Severity
from solbench.guard.rules import RULES, Rule
from solbench.guard.static import blocking, check_solution, check_sources

__all__ = ["Finding", "RULES", "Rule", "Severity", "blocking", "check_solution", "check_sources"]
