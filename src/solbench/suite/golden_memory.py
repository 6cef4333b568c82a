"""How much memory the evaluator's float64 golden run of a workload needs, from its shape-only analysis.

The golden run (evaluation/reference.py) runs the reference on float64 copies of its floating inputs. Besides
those copies and the float64 outputs, attention is what takes the memory: `scaled_dot_product_attention` in
float64 has only the math path, which holds the score matrix and its softmax (batch x heads x queries x keys,
8 bytes each, twice). A native 81-frame 480p Wan2.1 clip needs 103 GB of scores at once. Where a run does not fit
the device, the evaluator falls back to a float32 golden result or to none (the trace says which); this estimate
lets `solbench validate` name such GPU-tier workloads without a GPU. It is a lower bound: other intermediates of
the reference are not counted.
"""

from __future__ import annotations

import math
import re

from solbench.spec.problem import Problem
from solbench.spec.workload import Workload

GOLDEN_MEMORY_LIMIT = 16_000_000_000
"""A GPU-tier workload whose golden run needs more is reported: 16 GB leaves room on any current data-centre GPU
for the inputs, the reference's own outputs and the solution's."""
_SHAPE = re.compile(r"\[([\d, ]*)\]")


def attention_score_bytes(ops) -> int:
    """The largest float64 score matrix of the attention calls among an analysis's op rows (`WorkloadSol.ops`):
    the query's leading dimensions (batch, heads, queries) times the key count, 8 bytes each."""
    largest = 0
    for row in ops or ():
        if "attention" not in row.op:
            continue
        shapes = [[int(d) for d in s.split(",") if d.strip()] for s in _SHAPE.findall(row.shapes)]
        if len(shapes) < 2 or len(shapes[0]) < 3 or len(shapes[1]) < 2:
            continue
        query, key = shapes[0], shapes[1]
        largest = max(largest, math.prod(query[:-1]) * key[-2] * 8)
    return largest


def golden_run_bytes(problem: Problem, workload: Workload, ops) -> tuple[int, int]:
    """(float64 copies of inputs and outputs, attention scores and their softmax) for one workload."""
    return problem.tensor_bytes(dict(workload.axes), as_float64=True), 2 * attention_score_bytes(ops)
