"""Where a run keeps its traces: one JSONL file per job, written whole, so a run can resume.

Layout: ``OUT/traces/<set>/<problem>/<solution>.jsonl``. A file exists only once its job finished
(written to a temporary name, then renamed), so an interrupted run loses at most the jobs in flight.
"""

from __future__ import annotations

import os
from pathlib import Path

from solbench.runner.jobs import Job
from solbench.spec.trace import Trace


class TraceStore:
    def __init__(self, root: Path):
        self.root = Path(root)

    def path_of(self, job: Job) -> Path:
        return self.root / "traces" / job.set / job.name / f"{job.solution}.jsonl"

    def finished(self, job: Job, workload_uuids: list[str]) -> bool:
        """True when the job's file holds a trace for every workload it has now."""
        path = self.path_of(job)
        if not path.is_file():
            return False
        try:
            done = {Trace.model_validate_json(line).workload.uuid for line in path.read_text().splitlines() if line}
        except ValueError:
            return False
        return set(workload_uuids) <= done

    def write(self, job: Job, traces: list[Trace]) -> Path:
        path = self.path_of(job)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".jsonl.partial")
        temporary.write_text("".join(t.model_dump_json() + "\n" for t in traces))
        os.replace(temporary, path)
        return path

    def all_trace_files(self) -> list[Path]:
        return sorted((self.root / "traces").glob("*/*/*.jsonl"))
