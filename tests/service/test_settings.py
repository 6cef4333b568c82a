"""The service's evaluation defaults are the library's, read from it rather than copied."""

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import solbench.evaluation.config as config_module
from solbench.evaluation.config import EvaluationConfig
from solbench.sandbox.measure import TimingPlan
from solbench.service.settings import EvaluationSettings


def test_a_service_that_sets_nothing_evaluates_as_the_library_does():
    assert EvaluationSettings().config() == EvaluationConfig()


def test_a_changed_library_default_changes_the_service_default(monkeypatch):
    @dataclass(frozen=True)
    class Changed(EvaluationConfig):
        device: str = "cpu"
        rounds: int = 7
        timeout_s: float = 33.0
        time_reference: bool = False
        timing: TimingPlan = TimingPlan(budget_s=2.5, warmup_s=0.4, min_warmup=4, min_iterations=9)

    monkeypatch.setattr(config_module, "EvaluationConfig", Changed)
    path = Path(config_module.__file__).parents[1] / "service" / "settings.py"
    spec = importlib.util.spec_from_file_location("fresh_settings", path)
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)

    defaults = fresh.EvaluationSettings()
    assert (defaults.device, defaults.rounds, defaults.timeout_s, defaults.time_reference) == ("cpu", 7, 33.0, False)
    assert (defaults.budget_s, defaults.warmup_s, defaults.min_warmup, defaults.min_iterations) == (2.5, 0.4, 4, 9)
    assert defaults.config() == Changed()
