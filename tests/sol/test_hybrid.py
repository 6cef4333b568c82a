"""Hybrid values: shape-only floating-point tensors, real small integer ones from the problem's generator."""

from contextlib import contextmanager

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import AnalysisError, analyze_problem
from solbench.sol.hybrid import cpu_reference_source
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis

EXPERTS, HIDDEN, INTERMEDIATE = 16, 2048, 512

ROUTED_MOE = {
    "name": "routed_moe",
    "axes": {
        "tokens": {"type": "var"},
        "experts": {"type": "const", "value": EXPERTS},
        "hidden": {"type": "const", "value": HIDDEN},
        "inter": {"type": "const", "value": INTERMEDIATE},
    },
    "custom_inputs_entrypoint": "get_inputs",
    "inputs": {
        "x": {"shape": ["tokens", "hidden"], "dtype": "bfloat16"},
        "expert_ids": {"shape": ["tokens"], "dtype": "int64"},
        "w": {"shape": ["experts", "inter", "hidden"], "dtype": "bfloat16"},
    },
    "outputs": {"y": {"shape": ["tokens", "inter"], "dtype": "bfloat16"}},
    # Every token goes to expert 3 or 5: only those two experts' weights are read. The weights are
    # 16 Mi elements (32 MiB): the generator's randn of them must stay shape-only.
    "reference": "import torch\n"
    "def get_inputs(axes, device):\n"
    "    n = axes['tokens']\n"
    "    ids = torch.where(torch.arange(n) % 2 == 0, 3, 5).to(device)\n"
    "    return {'x': torch.randn(n, axes['hidden'], dtype=torch.bfloat16, device=device),\n"
    "            'expert_ids': ids,\n"
    "            'w': torch.randn(axes['experts'], axes['inter'], axes['hidden'], dtype=torch.bfloat16,\n"
    "                             device=device)}\n"
    "def run(x, expert_ids, w):\n"
    "    y = torch.zeros(x.shape[0], w.shape[1], dtype=x.dtype, device='cuda')\n"
    "    for e in range(w.shape[0]):\n"
    "        rows = torch.where(expert_ids == e)[0]\n"
    "        if rows.numel() == 0:\n"
    "            continue\n"
    "        y[rows] = x[rows] @ w[e].t()\n"
    "    return y\n",
}


def _problem(tmp_path, definition, workloads):
    return load_problem(write_problem(tmp_path / definition["name"], definition, workloads))


def test_routing_from_real_indices_counts_only_the_routed_experts(tmp_path):
    workload = {
        "uuid": "w",
        "axes": {"tokens": 64},
        "inputs": {n: {"type": "custom"} for n in ("x", "expert_ids", "w")},
    }
    [result] = analyze_problem(
        _problem(tmp_path, ROUTED_MOE, [workload]), lookup("B200_1500MHz"), make_inputs=inputs_for_analysis
    )
    assert result.coverage.full and result.coverage.execution.startswith("hybrid (")
    assert result.flops_by_class["matrix"]["bfloat16"] == 2 * 64 * HIDDEN * INTERMEDIATE
    weights = 2 * INTERMEDIATE * HIDDEN * 2  # experts 3 and 5, bf16
    activations = 64 * HIDDEN * 2 + 64 * 8 + 64 * INTERMEDIATE * 2  # x, ids, y
    assert result.bytes == weights + activations


def test_a_reference_that_names_the_cuda_device_analyses_on_the_cpu(tmp_path):
    definition = {
        "name": "cuda_named",
        "axes": {"n": {"type": "var"}},
        "inputs": {"x": {"shape": ["n", "n"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["n", "n"], "dtype": "float32"}},
        "reference": "import torch\ndef run(x):\n    device = torch.device('cuda')\n"
        "    mask = torch.ones((x.shape[0], x.shape[1]), dtype=torch.bool, device=device)\n"
        '    return x.cuda().masked_fill(mask.to("cuda:0"), 0.0)\n',
    }
    problem = _problem(tmp_path, definition, [{"uuid": "w", "axes": {"n": 32}, "inputs": {"x": {"type": "random"}}}])
    [result] = analyze_problem(problem, lookup("H200"), make_inputs=inputs_for_analysis)
    assert result.coverage.full and result.bytes == 2 * 32 * 32 * 4


def test_cpu_reference_source_rewrites_only_device_literals():
    source = "d = torch.device('cuda')\ny = x.cuda()\nz = x.to(\"cuda:1\")\nname = 'cudagraph'\n"
    assert cpu_reference_source(source) == (
        "d = torch.device('cpu')\ny = x.cpu()\nz = x.to(\"cpu\")\nname = 'cudagraph'\n"
    )


def test_work_steered_by_large_floating_point_data_is_said_not_run(tmp_path):
    # Which rows are summed depends on the values of a 128 Mi-element float tensor: no hybrid answer, and
    # the inputs are too large to run for real.
    definition = {
        "name": "float_routed",
        "axes": {"n": {"type": "var"}, "d": {"type": "const", "value": 8192}},
        "inputs": {"x": {"shape": ["n", "d"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["d"], "dtype": "float32"}},
        "reference": "import torch\ndef run(x):\n    rows = torch.nonzero(x[:, 0] > 0)[:, 0]\n"
        "    return x[rows].sum(0)\n",
    }
    problem = _problem(tmp_path, definition, [{"uuid": "w", "axes": {"n": 16384}, "inputs": {"x": {"type": "random"}}}])
    with pytest.raises(AnalysisError, match="cannot be analysed without running its floating-point work"):
        analyze_problem(problem, lookup("H200"), make_inputs=inputs_for_analysis)


def test_the_analysis_inputs_keep_floating_point_factories_above_the_input_limit_shape_only():
    """The generator's activations and weights never steer the work in most references, and computing block
    quantisation over them for real took seconds per workload: above REAL_INPUT_LIMIT elements they are
    shape-only from the factory on; small ones and integer ones stay real."""
    import torch

    from solbench.sol.hybrid import REAL_INPUT_LIMIT, hybrid_values

    with hybrid_values(float_factory_limit=REAL_INPUT_LIMIT):
        large = torch.randn(2, REAL_INPUT_LIMIT, dtype=torch.bfloat16)
        small = torch.rand(8, 4)
        ids = torch.randperm(4 * REAL_INPUT_LIMIT)
        codes = (large > 0).to(torch.uint8)
    assert large.is_meta and codes.is_meta and not small.is_meta and not ids.is_meta
    with hybrid_values():  # the default (the reference's own factories) keeps up to REAL_LIMIT real
        assert not torch.randn(2, REAL_INPUT_LIMIT).is_meta


def test_routing_from_a_float_input_above_the_fast_limit_is_followed_with_its_values(tmp_path):
    """Router logits of 8,192 tokens x 64 experts (512 Ki elements) steer the work: the fast attempt, with
    floating-point inputs above REAL_INPUT_LIMIT shape-only, needs their values; the second keeps them real."""
    definition = {
        "name": "logit_routed",
        "axes": {"n": {"type": "var"}, "e": {"type": "const", "value": 64}},
        "inputs": {"logits": {"shape": ["n", "e"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["e"], "dtype": "float32"}},
        "reference": "import torch\ndef run(logits):\n"
        "    rows = torch.nonzero(logits[:, 0] > 0)[:, 0]\n"
        "    return logits[rows].sum(0)\n",
    }
    problem = _problem(
        tmp_path, definition, [{"uuid": "w", "axes": {"n": 8192}, "inputs": {"logits": {"type": "random"}}}]
    )
    [result] = analyze_problem(problem, lookup("H200"), make_inputs=inputs_for_analysis)
    assert result.coverage.full and result.coverage.execution.startswith("hybrid (")


def test_ops_without_tensor_arguments_that_are_not_factories_run_under_the_hybrid_mode():
    import torch

    from solbench.sol.hybrid import hybrid_values

    with hybrid_values():
        x = torch.randn(4, 4)
        dtype = torch.promote_types(x.dtype, torch.float64)
    assert dtype == torch.float64


def test_the_recording_computes_its_small_real_ops_on_one_intra_op_thread(tmp_path):
    """OpenMP's fork and join cost more than a routing loop's small real ops (a nonzero per expert): the hybrid
    recording runs them on one thread, and the thread count is given back afterwards."""
    import torch

    if torch.get_num_threads() < 2:
        pytest.skip("one intra-op thread here already: nothing to tell apart")
    threads = torch.get_num_threads()
    definition = dict(
        ROUTED_MOE,
        name="one_thread",
        reference=ROUTED_MOE["reference"].replace(
            "    for e in range(w.shape[0]):\n",
            "    if torch.get_num_threads() != 1:\n        raise RuntimeError('recorded on several threads')\n"
            "    for e in range(w.shape[0]):\n",
        ),
    )
    workload = {
        "uuid": "w",
        "axes": {"tokens": 64},
        "inputs": {n: {"type": "custom"} for n in ("x", "expert_ids", "w")},
    }
    [result] = analyze_problem(
        _problem(tmp_path, definition, [workload]), lookup("B200_1500MHz"), make_inputs=inputs_for_analysis
    )
    assert result.coverage.execution.startswith("hybrid (")
    assert torch.get_num_threads() == threads


def test_a_problems_later_workloads_skip_the_ways_of_recording_that_failed_on_the_first(tmp_path):
    """Shapes only (meta, then fake tensors) fails on routing by values for every workload alike: after the first
    workload, recording starts with hybrid values, and reports the same reason."""
    definition = dict(
        ROUTED_MOE,
        name="plan",
        reference=ROUTED_MOE["reference"].replace(
            "def run(x, expert_ids, w):\n",
            "SHAPE_ONLY_RUNS = []\n"
            "def run(x, expert_ids, w):\n"
            "    if expert_ids.is_meta or type(expert_ids).__name__ == 'FakeTensor':\n"
            "        SHAPE_ONLY_RUNS.append(1)\n"
            "    elif len(SHAPE_ONLY_RUNS) > 2:\n"
            "        raise RuntimeError('shape-only recordings tried again')\n",
        ),
    )
    workloads = [
        {
            "uuid": f"w{n}",
            "axes": {"tokens": n},
            "inputs": {name: {"type": "custom"} for name in ("x", "expert_ids", "w")},
        }
        for n in (64, 96, 128)
    ]
    results = analyze_problem(
        _problem(tmp_path, definition, workloads), lookup("B200_1500MHz"), make_inputs=inputs_for_analysis
    )
    executions = {r.coverage.execution for r in results}
    assert len(executions) == 1
    assert executions.pop().startswith("hybrid (aten.nonzero.default: its output's shape depends on values)")
    assert [r.flops_by_class["matrix"]["bfloat16"] for r in results] == [
        2 * n * HIDDEN * INTERMEDIATE for n in (64, 96, 128)
    ]


def test_the_values_free_attempt_stops_at_the_first_branch_on_a_value():
    """Shape-only mode has no value to branch on: it says so at once rather than run the rest for nothing; the hybrid
    mode takes the branch as nonzero and lists it."""
    import torch

    from solbench.sol.errors import ValuesNeeded
    from solbench.sol.hybrid import HybridMode

    with pytest.raises(ValuesNeeded, match="branch"):
        with HybridMode(shape_only=True):
            bool(torch.empty(3, device="meta").sum() > 0)
    mode = HybridMode()
    with mode:
        assert float(torch.empty(3, device="meta").sum()) == 1.0
    assert mode.assumed == ["torch.float32 scalar"]


@contextmanager
def _counting_hybrid_values():
    """As `hybrid_values`, with a mode that lists the calls it computes."""
    from solbench.sol.hybrid import HybridMode, NativeSmallOps

    class Counting(HybridMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def compute(self, func, types, args=(), kwargs=None):
            self.calls.append(func.overloadpacket.__name__)
            return super().compute(func, types, args, kwargs)

        __torch_dispatch__ = compute

    mode = Counting()
    with mode, NativeSmallOps(mode):
        yield mode


def test_an_element_by_element_generator_loop_runs_natively_with_the_same_values():
    """A routing table filled token by token (`randperm` per token, `ids[i] = perm`): the loop's calls run below
    the values mode, and draw the same numbers from the same seed as the mode would."""
    import torch

    from solbench.sol.hybrid import HybridMode

    def generate():
        torch.manual_seed(7)
        ids = torch.zeros(32, 4, dtype=torch.int64)
        for i in range(32):
            ids[i] = torch.randperm(64)[:4]
        ids[0, 1:] = ids[1, :3]
        return ids, ids[5, 2].item(), ids[6].tolist()

    with HybridMode():
        expected = generate()
    with _counting_hybrid_values() as mode:
        found = generate()
    assert torch.equal(found[0], expected[0]) and found[1:] == expected[1:]
    assert mode.calls == ["zeros"]


def test_what_the_values_mode_must_decide_still_reaches_it():
    """A tensor written with shape-only values, an index that is a tensor, a meta tensor: the mode computes them."""
    import torch

    with _counting_hybrid_values() as mode:
        table = torch.zeros(8, 16)
        table.copy_(torch.empty(8, 16, device="meta"))  # now stale: its own data are out of date
        assert table[1].is_meta and table[2, 3].is_meta
        table[0] = 1.0
        rows = torch.arange(8)[torch.tensor([1, 3])]
        assert rows.tolist() == [1, 3]
        assert torch.empty(4, device="meta")[1:].is_meta
    assert {"select", "fill_", "index", "slice"} <= set(mode.calls)


def test_a_nonzero_of_a_strided_real_view_gives_nonzeros_indices():
    """The values mode takes a large strided view's nonzero as that of the view compared with zero (faster): the
    same indices for integer, boolean and floating-point views, NaN counted and -0.0 not, as nonzero does."""
    import torch

    from solbench.sol.hybrid import STRIDED_NONZERO_ELEMENTS, HybridMode

    torch.manual_seed(0)
    size = STRIDED_NONZERO_ELEMENTS
    codes = torch.randint(0, 3, (size, 5, 4)).permute(2, 1, 0)
    special = torch.tensor([0.0, -0.0, float("nan"), 2.0, float("-inf"), 0.0]).repeat(size, 1).t()
    for view in (codes[1], codes[:, 1, ::2], codes.bool()[2], special[:, 1:], special[::2]):
        assert not view.is_contiguous() and view.numel() >= STRIDED_NONZERO_ELEMENTS
        with HybridMode():
            found = torch.nonzero(view)
            rows, columns = torch.where(view)
        assert torch.equal(found, torch.nonzero(view))
        assert torch.equal(rows, torch.where(view)[0]) and torch.equal(columns, torch.where(view)[1])


def test_small_slices_of_a_large_mask_are_answered_from_its_sorted_nonzero():
    """A routing loop's `torch.where(mask[e])` over slices below STRIDED_NONZERO_ELEMENTS (128 experts, 4 slots,
    2,048 tokens: 8,192 elements each, every one on its own cache line) is answered from one sorted `nonzero` of
    the mask, with torch's own indices."""
    import torch

    from solbench.sol.hybrid import STRIDED_NONZERO_ELEMENTS, HybridMode
    from solbench.sol.select_nonzero import MIN_ELEMENTS

    torch.manual_seed(0)
    mask = torch.nn.functional.one_hot(torch.randint(0, 129, (2048, 4)), 129).permute(2, 1, 0)
    assert mask[0].numel() < STRIDED_NONZERO_ELEMENTS and mask.numel() >= MIN_ELEMENTS
    with HybridMode() as mode:
        found = [torch.where(mask[e]) for e in range(129)]
    assert mode._base_nonzero._sorted  # the mask was sorted once
    for e, (slots, tokens) in enumerate(found):
        expected = torch.where(mask[e])
        assert torch.equal(slots, expected[0]) and torch.equal(tokens, expected[1])


def test_only_a_small_integer_randperm_on_the_cpu_runs_below_the_values_mode():
    """`randperm` runs natively only where the mode would compute the same real result: an integer size within the
    index limit, an integer dtype, the CPU or a GPU without a generator (made on the CPU); a floating-point one, a
    size above the limit, the meta device or a GPU with a generator reach it."""
    import torch

    from solbench.sol.hybrid import REAL_INDEX_LIMIT, HybridMode, cuda_not_initialised

    with _counting_hybrid_values() as mode:
        torch.randperm(16)
        torch.randperm(16, dtype=torch.int32, device="cpu")
    assert mode.calls == []
    for device in ("cuda", torch.device("cuda", 0)):  # the generator's `device`: drawn on the CPU, as the mode would
        torch.manual_seed(3)
        with _counting_hybrid_values() as mode:
            native = torch.randperm(64, device=device)
        torch.manual_seed(3)
        with cuda_not_initialised(), HybridMode():
            through_the_mode = torch.randperm(64, device=device)
        assert mode.calls == [] and native.device.type == "cpu" and torch.equal(native, through_the_mode)
    with cuda_not_initialised(), _counting_hybrid_values() as mode:
        torch.randperm(16, device="cuda", generator=torch.Generator())
    assert mode.calls == ["randperm"]
    with _counting_hybrid_values() as mode:
        assert torch.randperm(16, dtype=torch.float32).dtype == torch.float32
        assert torch.randperm(REAL_INDEX_LIMIT + 1).is_meta
        torch.randperm(16, device="meta")
    assert mode.calls == ["randperm", "randperm", "randperm"]


def test_only_plain_indices_and_up_to_date_values_run_below_the_values_mode():
    """The generator loop's checks look at each argument's exact type: a slice bounded by a tensor, a tensor in an
    index tuple, a value written from a stale tensor, a `randperm` placed on the meta device by a device
    object: each reaches the mode. A device object or string naming the CPU does not."""
    import torch

    with _counting_hybrid_values() as mode:
        torch.randperm(8, device=torch.device("cpu"))
        torch.randperm(8, device="cpu:0")
    assert mode.calls == []
    with _counting_hybrid_values() as mode:
        assert torch.randperm(8, device=torch.device("meta")).is_meta
    assert mode.calls == ["randperm"]
    table = torch.arange(12).reshape(3, 4)
    with _counting_hybrid_values() as mode:
        assert table[: torch.tensor(2)].shape == (2, 4)
    assert "slice" in mode.calls
    with _counting_hybrid_values() as mode:
        assert table[1, torch.tensor(2)].item() == 6
    assert mode.calls.count("select") == 2
    with _counting_hybrid_values() as mode:
        rows = torch.zeros(3, 4, dtype=torch.int64)
        rows[0] = 7
        assert rows[0].tolist() == [7, 7, 7, 7]
        stale = torch.zeros(4, dtype=torch.int64)
        stale.copy_(torch.empty(4, dtype=torch.int64, device="meta"))
        rows[1] = stale
    assert mode.calls == ["zeros", "zeros", "empty", "copy_", "select", "copy_"]


def test_the_values_mode_still_decides_after_an_inference_mode_block_between_native_calls():
    """Native calls set the mode aside one call at a time: an `inference_mode` block that the generator enters after
    one (and leaves after a call the mode decides) restores the dispatch state it found, which must have the mode in
    effect, so a large floating-point factory after it stays shape-only."""
    import torch

    from solbench.sol.hybrid import REAL_INPUT_LIMIT, hybrid_values

    with hybrid_values(float_factory_limit=REAL_INPUT_LIMIT):
        ids = torch.zeros(4, 2, dtype=torch.int64)
        ids[0] = torch.randperm(8)[:2]
        with torch.inference_mode():
            ids[1] = torch.randperm(8)[:2]
            torch.ones(3).sum()
        assert torch.randn(1 << 23).is_meta
