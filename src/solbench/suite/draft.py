"""A problem before it is written to disk: the recipe's output, with the model it was taken from.

Recipes (the checkout's ``suite_recipes/``) and `solbench extract` return drafts; `write_problem` turns one into a
standard problem folder (``definition.json`` + ``workload.jsonl``, the reference also as ``reference.py``). Provenance
travels as definition tags, so the folders stay in the upstream format: ``set:L1``, ``model:Llama-3.1-8B``,
``hf:meta-llama/Llama-3.1-8B``, ``domain:language``, ``pass:forward``, ``origin:recipe``,
``config:hidden_size=4096`` ...; the suite's build also writes it as ``provenance.json`` (`suite.provenance`).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solbench.spec.definition import Definition
from solbench.spec.tiers import CPU_WORKLOAD_FILE
from solbench.spec.workload import Workload
from solbench.suite.naming import problem_name
from solbench.suite.reference_file import write_reference

SETS = ("L1", "L2", "Quant", "FIB", "DLRM")
DOMAINS = ("language", "vision", "speech", "diffusion", "multimodal", "video", "recommender")
ORIGINS = ("recipe", "extract")
_UUID_NAMESPACE = uuid.UUID("6f1c1f1e-5b0e-4a55-9f5e-50b2e4c35ac1")

Scalar = bool | int | float


@dataclass(frozen=True)
class ModelRef:
    """The real model a problem is taken from, with the published configuration values it uses."""

    name: str
    """As in model-configs.json ``name``."""
    hf_id: str | None
    """None where the model has no Hugging Face id (model-configs.json ``hf_id: null``)."""
    domain: str
    config: dict[str, Any]
    """Only the values the problem uses, under model-configs.json's key names."""

    def __post_init__(self) -> None:
        if self.domain not in DOMAINS:
            raise ValueError(f"{self.name}: unknown domain {self.domain!r} (known: {', '.join(DOMAINS)})")


@dataclass
class ProblemDraft:
    set: str
    name: str
    op_type: str
    description: str
    model: ModelRef
    axes: dict[str, dict[str, Any]]
    inputs: dict[str, dict[str, Any]]
    outputs: dict[str, dict[str, Any]]
    reference: str
    workloads: list[dict[str, int]]
    """Values of the ``var`` axes, one dict per workload."""
    tolerance: dict[str, Any] | None = None
    backward: bool = False
    scalars: dict[str, Scalar] = field(default_factory=dict)
    """Values of scalar inputs (``shape: null``), the same in every workload."""
    custom_inputs_entrypoint: str | None = None
    constraints: list[str] = field(default_factory=list)
    origin: str = "recipe"
    extra_tags: list[str] = field(default_factory=list)
    cpu_workloads: list[dict[str, int]] | None = None
    """The CPU tier (``workload.cpu.jsonl``) where ``workloads`` are GPU-scale; None: no CPU tier."""

    def __post_init__(self) -> None:
        if self.set not in SETS:
            raise ValueError(f"{self.name}: unknown set {self.set!r} (known: {', '.join(SETS)})")
        if self.origin not in ORIGINS:
            raise ValueError(f"{self.name}: unknown origin {self.origin!r}")
        self.name = problem_name(self.name, self.model.name)

    @property
    def tags(self) -> list[str]:
        tags = [f"set:{self.set}", f"model:{self.model.name}"]
        tags += [f"hf:{self.model.hf_id}"] if self.model.hf_id else []
        tags += [
            f"domain:{self.model.domain}",
            f"pass:{'backward' if self.backward else 'forward'}",
            f"origin:{self.origin}",
        ]
        tags += [f"config:{key}={_config_text(value)}" for key, value in self.model.config.items()]
        return tags + list(self.extra_tags)

    def definition(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "op_type": self.op_type,
            "description": self.description,
            "tags": self.tags,
            "axes": self.axes,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "reference": self.reference,
        }
        if self.custom_inputs_entrypoint:
            data["custom_inputs_entrypoint"] = self.custom_inputs_entrypoint
        if self.constraints:
            data["constraints"] = self.constraints
        return data

    def workload_records(self, tier: str = "gpu") -> list[dict[str, Any]]:
        """Records of ``workloads`` (tier "gpu") or ``cpu_workloads`` ("cpu"); uuids differ across tiers."""
        records = []
        salt = "cpu:" if tier == "cpu" else ""
        for values in (self.cpu_workloads or []) if tier == "cpu" else self.workloads:
            inputs: dict[str, Any] = {}
            for input_name, spec in self.inputs.items():
                if spec.get("shape") is None:
                    inputs[input_name] = {"type": "scalar", "value": self.scalars[input_name]}
                elif self.custom_inputs_entrypoint:
                    inputs[input_name] = {"type": "custom"}
                else:
                    inputs[input_name] = {"type": "random"}
            key = json.dumps(values, sort_keys=True)
            record: dict[str, Any] = {
                "uuid": str(uuid.uuid5(_UUID_NAMESPACE, f"{salt}{self.name}:{key}")),
                "axes": values,
                "inputs": inputs,
            }
            if self.tolerance:
                record["tolerance"] = self.tolerance
            records.append(record)
        return records


def _config_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (list, dict)) else str(value)


def written_files(draft: ProblemDraft) -> list[str]:
    """The names of the files `write_problem` writes for `draft`."""
    names = ["definition.json", "reference.py", "workload.jsonl"]
    return names + [CPU_WORKLOAD_FILE] if draft.cpu_workloads else names


def write_problem(draft: ProblemDraft, root: Path) -> Path:
    """Write ``root/<set>/<name>/``; the files are checked against the schemas before they land."""
    definition = draft.definition()
    Definition.model_validate(definition)
    records = draft.workload_records()
    cpu_records = draft.workload_records("cpu")
    for record in records + cpu_records:
        Workload.model_validate(record)
    folder = Path(root) / draft.set / draft.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "definition.json").write_text(json.dumps(definition, indent=2) + "\n")
    write_reference(folder, definition["reference"])
    (folder / "workload.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if cpu_records:
        (folder / CPU_WORKLOAD_FILE).write_text("".join(json.dumps(r) + "\n" for r in cpu_records))
    return folder
