"""Importing SOL-ExecBench's data set as solbench problem folders (`solbench suite import` / `suite fetch`)."""

from solbench.suite.importer.convert import import_benchmark
from solbench.suite.importer.errors import FetchError, ImportSourceError
from solbench.suite.importer.report import ImportNote, ImportReport

__all__ = ["FetchError", "ImportNote", "ImportReport", "ImportSourceError", "import_benchmark"]
