"""The parent's record of a timed loop is what the sandbox streamed as each call was timed (protocol.SampleTaken):
a final reply that differs, in a sample or in an iteration's perturbation seed, was rewritten in the sandbox's
memory after the fact and is refused."""

from solbench.evaluation.session import _against_streamed
from solbench.sandbox.protocol import GuardTripped, Timed


def _timed(samples: list[float], seeds: list[int] | None) -> Timed:
    return Timed(
        backend="cpu",
        samples_s=samples,
        warmup=1,
        flush_bytes=0,
        flush_mode="none",
        flush_note=None,
        resolution_s=None,
        captured=[],
        warnings=[],
        seeds=seeds,
    )


SAMPLES, SEEDS = [0.010, 0.012, 0.011], [11, 22, 33]


def test_a_reply_as_streamed_is_taken():
    reply = _timed([0.010, 0.012, 0.011], [11, 22, 33])
    assert _against_streamed(reply, SAMPLES, SEEDS) is reply


def test_rewritten_samples_are_refused():
    refused = _against_streamed(_timed([0.001, 0.001, 0.011], [11, 22, 33]), SAMPLES, SEEDS)
    assert isinstance(refused, GuardTripped) and refused.rule == "streamed-samples"
    assert "2 of 6" in refused.error


def test_a_rewritten_seed_is_refused():
    """A checked output's inputs are rebuilt from its seed: one rewritten would have the parent check the answer to
    inputs the solution chose."""
    refused = _against_streamed(_timed([0.010, 0.012, 0.011], [11, 22, 99]), SAMPLES, SEEDS)
    assert isinstance(refused, GuardTripped) and refused.rule == "streamed-samples"


def test_samples_dropped_or_added_are_refused():
    assert isinstance(_against_streamed(_timed([0.010, 0.012], [11, 22]), SAMPLES, SEEDS), GuardTripped)
    assert isinstance(
        _against_streamed(_timed([0.010, 0.012, 0.011, 0.2], [11, 22, 33, 44]), SAMPLES, SEEDS), GuardTripped
    )
