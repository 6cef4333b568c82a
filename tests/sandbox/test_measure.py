"""The sampling policy, driven by a fake clock and a fake timer so that no test depends on real time."""

from solbench.sandbox.measure import TimingPlan, measure


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class FakeTimer:
    """Each call 'takes' the next duration in `durations` and advances the clock by it."""

    name = "fake"

    def __init__(self, clock, durations):
        self.clock, self.durations, self.calls = clock, list(durations), 0

    def time_call(self, fn):
        fn()
        duration = self.durations[min(self.calls, len(self.durations) - 1)]
        self.calls += 1
        self.clock.now += duration
        return duration


class CountingFlusher:
    bytes = 123

    def __init__(self):
        self.count = 0

    def flush(self):
        self.count += 1


def _run(durations, plan, variants=3):
    clock = FakeClock()
    timer, flusher, prepared, results = FakeTimer(clock, durations), CountingFlusher(), [], iter(range(10**6))
    measurement = measure(
        lambda: next(results), lambda i, seed: prepared.append(i), variants, timer, flusher, plan, clock=clock
    )
    return measurement, prepared, flusher, timer


def test_stops_once_the_mean_is_known_well_enough():
    measurement, prepared, flusher, timer = _run(
        [0.01], TimingPlan(budget_s=100, warmup_s=0, min_warmup=2, min_iterations=5)
    )
    assert measurement.warmup == 2
    assert len(measurement.samples_s) == 5  # constant samples: standard error zero at the minimum count
    assert flusher.count == timer.calls == 7  # a flush before every call, warm-up included
    assert prepared == [-1, -2, 0, 1, 2, 3, 4]  # every call gets its own iteration's inputs


def test_noisy_samples_run_until_the_budget():
    noisy = [0.01, 0.03] * 1000
    measurement, *_ = _run(
        noisy, TimingPlan(budget_s=1.0, warmup_s=0, min_warmup=1, min_iterations=5, target_rel_std_err=0.001)
    )
    assert 1.0 <= sum(measurement.samples_s) <= 1.04
    assert any("relative standard error" in w for w in measurement.warnings)


def test_slow_calls_still_get_the_minimum_over_budget():
    measurement, *_ = _run(
        [5.0],
        TimingPlan(
            budget_s=1.0,
            warmup_s=0,
            min_warmup=1,
            min_iterations=5,
            min_iterations_over_budget=3,
            target_rel_std_err=0.0,
        ),
    )
    assert len(measurement.samples_s) == 3


def test_keeps_one_timed_output_per_input_variant():
    measurement, *_ = _run(
        [0.01], TimingPlan(budget_s=100, warmup_s=0, min_warmup=4, min_iterations=1, capture=True), variants=3
    )
    assert len(measurement.samples_s) == 3  # kept going until every variant had a call
    assert sorted(measurement.captured) == [0, 1, 2]
    assert measurement.captured[1] == 4 + 1  # warm-up produced results 0..3


def test_the_kept_output_is_any_of_a_variants_calls_drawn_after_the_call():
    """Nothing before a call says whether its output will be checked: over many runs each call is kept."""
    chosen = set()
    for _ in range(200):
        measurement, *_ = _run(
            [0.01], TimingPlan(budget_s=100, warmup_s=0, min_warmup=1, min_iterations=9, capture=True), variants=3
        )
        assert len(measurement.samples_s) == 9 and len(measurement.captured) == 3
        assert sorted(i % 3 for i in measurement.captured) == [0, 1, 2]
        chosen.update(i for i in measurement.captured if i % 3 == 0)
    assert chosen == {0, 3, 6}


def test_the_kept_output_is_drawn_from_the_os_not_from_objects_a_solution_can_patch(monkeypatch):
    """A solution that patches `secrets`' shared generator (`secrets._sysrand._randbelow`, reached without a rule
    until the red team found it) to keep only each variant's first call cannot steer the draw."""
    import secrets

    monkeypatch.setattr(secrets._sysrand, "_randbelow", lambda n: 0 if n == 1 else 1)
    monkeypatch.setattr(secrets, "randbelow", lambda n: 0 if n == 1 else 1)
    chosen = set()
    for _ in range(60):
        measurement, *_ = _run(
            [0.01], TimingPlan(budget_s=100, warmup_s=0, min_warmup=1, min_iterations=9, capture=True), variants=3
        )
        chosen.update(measurement.captured)
    assert chosen - {0, 1, 2}, "only the first calls were ever kept: the draw was steered"


def test_iteration_cap():
    measurement, *_ = _run(
        [0.01, 0.02] * 100, TimingPlan(budget_s=1e9, warmup_s=0, max_iterations=50, target_rel_std_err=0.0)
    )
    assert len(measurement.samples_s) == 50


def test_the_timers_resolution_is_kept_and_times_near_it_warned_about():
    class CoarseTimer(FakeTimer):
        @staticmethod
        def resolution_s():
            return 1e-3

    clock = FakeClock()
    measurement = measure(
        lambda: None,
        lambda i, seed: None,
        1,
        CoarseTimer(clock, [2e-3]),
        CountingFlusher(),
        TimingPlan(budget_s=1, warmup_s=0, min_warmup=1, min_iterations=3),
        clock=clock,
    )
    assert measurement.resolution_s == 1e-3
    assert any("resolution" in warning for warning in measurement.warnings)
    plain = measure(
        lambda: None,
        lambda i, seed: None,
        1,
        FakeTimer(clock, [2e-3]),
        CountingFlusher(),
        TimingPlan(budget_s=1, warmup_s=0, min_warmup=1, min_iterations=3),
        clock=clock,
    )
    assert plain.resolution_s is None


def test_each_timed_iterations_perturbation_seed_is_drawn_as_it_is_prepared():
    """The plan's seed alone does not say what an iteration's inputs will be (a solution that read it could compute
    every timed answer during warm-up): each iteration mixes in a draw from the OS, hands it to the parent before
    `prepare` gets it, and keeps it for the reply."""

    def seeds_of_one_run() -> list:
        clock = FakeClock()
        prepared, sent = [], []
        measurement = measure(
            lambda: None,
            lambda i, seed: prepared.append((i, seed)),
            3,
            FakeTimer(clock, [0.01]),
            CountingFlusher(),
            TimingPlan(budget_s=100, warmup_s=0, min_warmup=1, min_iterations=6, perturb_seed=12345),
            clock=clock,
            on_seed=lambda i, seed: sent.append((i, seed)),
        )
        timed = [(i, seed) for i, seed in prepared if i >= 0]
        assert timed == sent and [seed for _, seed in sent] == measurement.seeds
        return measurement.seeds or []

    first, second = seeds_of_one_run(), seeds_of_one_run()
    assert first != second and all(seed != 12345 for seed in first)
