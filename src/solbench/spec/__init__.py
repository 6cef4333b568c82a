"""Formats: Definition, Workload, Solution and Trace, and loading them from disk with clear errors."""

from solbench.spec.definition import Definition, TensorSpec
from solbench.spec.dtypes import DTYPES, DType, lookup_dtype
from solbench.spec.errors import ConstraintError, MissingDataError, SpecError
from solbench.spec.packaging import compiled_reference_solution, reference_solution
from solbench.spec.problem import Problem, check_data_files, find_data_file, load_problem, load_solution
from solbench.spec.problem_set import problem_set
from solbench.spec.solution import Language, Solution
from solbench.spec.trace import (
    CheckOutcome,
    Correctness,
    Environment,
    Evaluation,
    EvaluationDetails,
    EvaluationStatus,
    Performance,
    SolRecord,
    TimingSummary,
    Trace,
)
from solbench.spec.trace_files import read_traces
from solbench.spec.workload import Tolerance, Workload

__all__ = [
    "CheckOutcome",
    "ConstraintError",
    "Correctness",
    "DTYPES",
    "DType",
    "Definition",
    "Environment",
    "Evaluation",
    "EvaluationDetails",
    "EvaluationStatus",
    "Language",
    "MissingDataError",
    "Performance",
    "Problem",
    "SolRecord",
    "Solution",
    "SpecError",
    "TensorSpec",
    "TimingSummary",
    "Tolerance",
    "Trace",
    "Workload",
    "check_data_files",
    "compiled_reference_solution",
    "find_data_file",
    "load_problem",
    "load_solution",
    "lookup_dtype",
    "problem_set",
    "read_traces",
    "reference_solution",
]
