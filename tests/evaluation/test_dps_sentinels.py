"""DPS output buffers of every kind start as sentinels: a kernel that writes only the non-zero part fails.

A buffer pre-filled with zeros would let such a kernel pass (a known loophole of other harnesses):
here integers start at their minimum, booleans at True and fp8 bytes at 0xFF (NaN).
"""

import pytest

from conftest import make_solution, write_problem
from solbench.evaluation import evaluate
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus

MIXED = {
    "name": "mixed_outputs",
    "axes": {"N": {"type": "var"}},
    "inputs": {"x": {"shape": ["N"], "dtype": "float32"}, "k": {"shape": ["N"], "dtype": "int32"}},
    "outputs": {
        "ints": {"shape": ["N"], "dtype": "int32"},
        "flags": {"shape": ["N"], "dtype": "bool"},
        "small": {"shape": ["N"], "dtype": "float8_e4m3fn"},
    },
    "reference": "import torch\n\ndef run(x, k):\n"
    "    return k.clamp(min=0), x > 0, x.clamp(min=0).to(torch.float8_e4m3fn)\n",
}

FULL = {
    "ints": "ints.copy_(k.clamp(min=0))",
    "flags": "flags.copy_(x > 0)",
    "small": "small.copy_(x.clamp(min=0).to(torch.float8_e4m3fn))",
}
ONLY_NON_ZERO = {  # correct wherever the answer is not zero; the zeros are left to the buffer
    "ints": "positive = k > 0\n    ints[positive] = k[positive]",
    "flags": "flags[x > 0] = True",
    "small": "bits = x.clamp(min=0).to(torch.float8_e4m3fn).view(torch.uint8)\n    nonzero = bits != 0\n"
    "    small.view(torch.uint8)[nonzero] = bits[nonzero]",
}


def _solution(partial: str | None):
    body = "\n    ".join(ONLY_NON_ZERO[name] if name == partial else FULL[name] for name in FULL)
    return make_solution(
        f"import torch\n\ndef run(x, k, ints, flags, small):\n    {body}\n", definition="mixed_outputs", dps=True
    )


@pytest.mark.slow
@pytest.mark.parametrize("partial", [None, "ints", "flags", "small"])
def test_a_dps_output_written_only_where_non_zero_fails(tmp_path, fast_config, partial):
    problem = load_problem(
        write_problem(
            tmp_path / "mixed",
            MIXED,
            [{"uuid": "n4096", "axes": {"N": 4096}, "inputs": {"x": {"type": "random"}, "k": {"type": "random"}}}],
        )
    )
    [trace] = evaluate(problem, _solution(partial), fast_config)
    details = trace.evaluation.solbench
    if partial is None:  # writing every element passes: the problem itself is sound
        assert trace.evaluation.status is EvaluationStatus.PASSED, f"{details.failure}\n{trace.evaluation.log[-2000:]}"
        return
    assert trace.evaluation.status is EvaluationStatus.INCORRECT_NUMERICAL, (
        f"{trace.evaluation.status}: {details.failure}\n{trace.evaluation.log[-2000:]}"
    )
    failed = next(c for c in details.checks if not c.passed)
    assert failed.output == partial, failed
