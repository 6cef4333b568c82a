"""Harness options are checked when the configuration is made, before any sandbox starts."""

import dataclasses
import re

import pytest

from solbench.errors import SolbenchError
from solbench.evaluation import EvaluationConfig, HarnessOptionError
from solbench.evaluation.config import check_device_available
from solbench.sandbox.measure import TimingPlan


@pytest.mark.parametrize(
    "options, message",
    [
        ({"timer": "cuda_foo"}, "timer cuda_foo: unknown timer (known: cpu_monotonic, cuda_events, cuda_profiler)"),
        (
            {"device": "cpu", "timer": "cuda_events"},
            "timer cuda_events: needs a cuda device, not cpu (timers for cpu: cpu_monotonic)",
        ),
        ({"device": "cpu", "timer": "cuda_profiler"}, "timer cuda_profiler: needs a cuda device, not cpu"),
        ({"device": "cuda", "timer": "cpu_monotonic"}, "timer cpu_monotonic: needs a cpu device, not cuda"),
        ({"device": "tpu"}, "device tpu: unknown device (known: auto, cpu, cuda, cuda:N)"),
        ({"device": "cuda:x"}, "device cuda:x: unknown device"),
        ({"rounds": 0}, "rounds 0: must be positive"),
        ({"rounds": 2.5}, "rounds 2.5: must be a whole number"),
        ({"timeout_s": 0}, "timeout_s 0: must be positive"),
        ({"timeout_s": float("nan")}, "timeout_s nan: must be a finite number"),
        ({"build_timeout_s": -1}, "build_timeout_s -1: must be positive"),
        ({"flush_cache": "no"}, "flush_cache no: must be true or false"),
        ({"cpu_flush": "clwb"}, "cpu_flush clwb: unknown flush (known: operands, stream)"),
        ({"memory_limit_bytes": 0}, "memory_limit_bytes 0: must be positive"),
        ({"timing": TimingPlan(budget_s=-1.0)}, "timing.budget_s -1.0: must not be negative"),
        ({"timing": TimingPlan(max_iterations=2)}, "timing.max_iterations 2: must be at least min_iterations"),
        ({"timing": {"budget_s": 1.0}}, "timing {'budget_s': 1.0}: must be a TimingPlan"),
    ],
)
def test_a_bad_option_is_named_when_the_config_is_made(options, message):
    with pytest.raises(HarnessOptionError, match=f"^{re.escape(message)}"):
        EvaluationConfig(**options)


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(TimingPlan)])
def test_every_timing_plan_field_is_checked(field):
    """A field added to TimingPlan without a check here would reach the sandbox unchecked."""
    with pytest.raises(HarnessOptionError, match=f"^timing.{field} "):
        EvaluationConfig(timing=dataclasses.replace(TimingPlan(), **{field: "x"}))


def test_with_device_auto_the_timer_is_checked_against_the_device_it_resolves_to():
    config = EvaluationConfig(timer="cuda_events")  # the name is known; the device is not yet
    import torch

    if torch.cuda.is_available():
        assert config.resolved().device == "cuda"
    else:
        with pytest.raises(HarnessOptionError, match="^timer cuda_events: needs a cuda device, not cpu"):
            config.resolved()


def test_an_option_error_is_a_user_error_with_its_parts():
    with pytest.raises(SolbenchError, match="timer") as raised:
        EvaluationConfig(timer="nope")
    assert (raised.value.option, raised.value.value) == ("timer", "nope")
    assert raised.value.reason.startswith("unknown timer")


def test_good_options_pass():
    config = EvaluationConfig(device="cuda:1", timer="cuda_profiler", timing=TimingPlan(budget_s=0.0))
    assert config.timer == "cuda_profiler"
    EvaluationConfig(timer="cpu_monotonic", memory_limit_bytes=1 << 30)


def test_a_cuda_device_this_machine_lacks_is_an_option_error():
    import torch

    if torch.cuda.is_available():
        with pytest.raises(HarnessOptionError, match="device cuda:99: no such CUDA device"):
            check_device_available("cuda:99")
    else:
        with pytest.raises(HarnessOptionError, match="device cuda: no CUDA device is available here"):
            check_device_available("cuda")
    check_device_available("cpu")
