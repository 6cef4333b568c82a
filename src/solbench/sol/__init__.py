"""Speed of light: record the reference's ATen ops, cost each one, and bound the time by the roofline."""

from solbench.sol.analysis import WorkloadSol, analyze_problem, analyze_workload
from solbench.sol.costs import OpCost
from solbench.sol.errors import AnalysisError
from solbench.sol.roofline import Roofline, roofline

__all__ = ["AnalysisError", "OpCost", "Roofline", "WorkloadSol", "analyze_problem", "analyze_workload", "roofline"]
