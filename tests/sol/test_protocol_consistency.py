"""T_SOL is a lower bound under the timing protocol (issue 12 item 5): outputs are charged whole because the
harness materialises what a value-returning solution hands back (a stride-0 expanded view, an updated input)
inside the timed region, and the caches are flushed before every timed call so reads come from DRAM."""

import torch

from conftest import write_problem
from solbench.evaluation.config import EvaluationConfig
from solbench.hardware import lookup
from solbench.sandbox.calling import materialized
from solbench.sol import analyze_problem
from solbench.spec import load_problem


def test_the_harness_materialises_views_and_returned_inputs_inside_the_timed_call():
    cache = torch.zeros(4, 8)
    fresh = torch.ones(4, 8)
    expanded = torch.ones(1, 8).expand(4, 8)
    out_view, out_cache, out_fresh = materialized(
        [expanded, cache, fresh], frozenset({cache.untyped_storage().data_ptr()})
    )
    assert out_fresh is fresh  # a contiguous fresh output: untouched
    assert out_view.stride() == (8, 1) and out_view.untyped_storage().nbytes() == 4 * 8 * 4  # written whole
    assert out_cache is not cache and out_cache.untyped_storage().data_ptr() != cache.untyped_storage().data_ptr()


def _analyse(tmp_path, name, inputs, outputs, reference, axes):
    definition = {
        "name": name,
        "axes": {"n": {"type": "var"}, "d": {"type": "const", "value": 64}},
        "inputs": inputs,
        "outputs": outputs,
        "reference": reference,
    }
    workload = {"uuid": "w", "axes": axes, "inputs": {k: {"type": "random"} for k in inputs}}
    problem = load_problem(write_problem(tmp_path / name, definition, [workload]))
    return analyze_problem(problem, lookup("B200_1500MHz"))[0]


def test_outputs_that_are_expanded_views_or_returned_inputs_are_charged_whole(tmp_path):
    expanded = _analyse(
        tmp_path,
        "expanded",
        {"x": {"shape": ["d"], "dtype": "float32"}},
        {"y": {"shape": ["n", "d"], "dtype": "float32"}},
        "import torch\ndef run(x):\n    return x.unsqueeze(0).expand(4096, 64)\n",
        {"n": 4096},
    )
    assert expanded.output_bytes == 4096 * 64 * 4  # the logical size: the harness writes the view out whole
    cache = _analyse(
        tmp_path,
        "cache",
        {"cache": {"shape": ["n", "d"], "dtype": "float32"}, "row": {"shape": ["d"], "dtype": "float32"}},
        {"cache_out": {"shape": ["n", "d"], "dtype": "float32"}},
        "import torch\ndef run(cache, row):\n    cache[0] = row\n    return cache\n",
        {"n": 4096},
    )
    assert cache.output_bytes == 4096 * 64 * 4  # the whole cache: the harness copies a returned input


def test_the_memory_roof_assumes_cold_caches_as_the_default_protocol_flushes_them():
    assert EvaluationConfig().flush_cache is True
