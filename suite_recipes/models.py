"""The real models recipes draw from, with the published configuration values they use.

Every value here was copied from solbench/suite/data/model-configs.json (the record's ``source`` names the
published file); the build writes them to each folder's provenance.json and tests/suite/test_provenance.py
checks them against it. Keys follow model-configs.json; ``derived.*`` keys are arithmetic on published values.
"""

from __future__ import annotations

from solbench.suite.draft import ModelRef


def model(name: str, hf_id: str, domain: str, config: dict) -> ModelRef:
    """Nested published keys are written with dots: ``text_config.hidden_size``, ``derived.head_dim``."""
    return ModelRef(name=name, hf_id=hf_id, domain=domain, config=dict(config))
