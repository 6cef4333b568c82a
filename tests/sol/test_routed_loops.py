"""Routed loops (sol/routed.py) change how the analyzer records a loop over experts, never what it finds.

Each mixture-of-experts reference is analysed with routed-loop templates and with the plain reference, and the
two results must be identical field for field (T_SOL, FLOPs per class and precision, compulsory bytes, ATen call
count); the number of ops the recorder actually recorded tells whether templates applied.
"""

import textwrap

import pytest
import torch

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import analysis, analyze_problem
from solbench.sol.recorder import OpRecorder
from solbench.sol.routed import with_routed_loops
from solbench.spec import load_problem
from solbench.spec.inputs import inputs_for_analysis

GENERATOR = """
import torch
import torch.nn.functional as F

def get_inputs(axes, device):
    t, e = axes['t'], axes['e']
    ids = torch.stack([torch.randperm(e // 2)[:2] * 2 for _ in range(t)])  # odd experts never hit
    return {
        'x': torch.randn(t, 64, dtype=torch.bfloat16),
        'ids': ids,
        'w': (torch.rand(t, 2) + 0.1).to(torch.bfloat16),
        'gate': torch.randn(e, 32, 64, dtype=torch.bfloat16),
        'down': torch.randn(e, 64, 32, dtype=torch.bfloat16),
    }
"""

MOE = (
    GENERATOR
    + """
def run(x, ids, w, gate, down):
    out = torch.zeros_like(x)
    mask = F.one_hot(ids, num_classes=gate.shape[0]).permute(2, 1, 0)
    for e in range(gate.shape[0]):
        slot, tokens = torch.where(mask[e])
        if tokens.numel() == 0:
            continue
        h = F.silu(torch.matmul(x[tokens], gate[e].t()))
        y = torch.matmul(h, down[e].t())
        out.index_add_(0, tokens, (y * w[tokens, slot].unsqueeze(-1)).to(torch.bfloat16))
    return out
"""
)

MOE_OVER_HIT_EXPERTS = (
    GENERATOR
    + """
def run(x, ids, w, gate, down):
    out = torch.zeros_like(x)
    mask = F.one_hot(ids, num_classes=gate.shape[0]).permute(2, 1, 0)
    hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
    for expert in hit:
        e = expert[0].item()
        slot, tokens = torch.where(mask[e])
        up = x[tokens].float() @ gate[e].float().t()
        y = torch.sigmoid(up).to(torch.bfloat16) @ down[e].t()
        out.index_add_(0, tokens, y * w[tokens, slot, None])
    return out
"""
)

VALUE_READ_IN_BODY = MOE.replace(
    "        h = F.silu",
    "        listed = tokens.tolist()  # values read in Python: no ATen call shows it\n        h = F.silu",
)


def _definition(name: str, reference: str) -> dict:
    return {
        "name": name,
        "axes": {"t": {"type": "var"}, "e": {"type": "const", "value": 32}},
        "custom_inputs_entrypoint": "get_inputs",
        "inputs": {
            "x": {"shape": ["t", 64], "dtype": "bfloat16"},
            "ids": {"shape": ["t", 2], "dtype": "int64"},
            "w": {"shape": ["t", 2], "dtype": "bfloat16"},
            "gate": {"shape": ["e", 32, 64], "dtype": "bfloat16"},
            "down": {"shape": ["e", 64, 32], "dtype": "bfloat16"},
        },
        "outputs": {"out": {"shape": ["t", 64], "dtype": "bfloat16"}},
        "reference": textwrap.dedent(reference),
    }


def _analyse(tmp_path, definition: dict, monkeypatch, *, templates: bool):
    """The results (as JSON) and the ATen calls the recorder recorded one by one."""
    workloads = [
        {"uuid": f"t{t}", "axes": {"t": t}, "inputs": {name: {"type": "custom"} for name in definition["inputs"]}}
        for t in (96,)
    ]
    folder = write_problem(tmp_path / f"{definition['name']}_{templates}", definition, workloads)
    seen = []
    record = OpRecorder._record

    def counting(self, *args):
        seen.append(1)
        return record(self, *args)

    with monkeypatch.context() as patch:
        patch.setattr(OpRecorder, "_record", counting)
        # a cache folder per configuration: the other's recording plan (sol/plan_cache.py) would skip stages
        patch.setenv("SOLBENCH_CACHE_DIR", str(tmp_path / f"cache_{templates}"))
        if not templates:
            patch.setattr(analysis, "_with_loop_shortcuts", lambda definition, folders: None)
        results = analyze_problem(
            load_problem(folder), lookup("B200_1500MHz"), make_inputs=inputs_for_analysis, precision="strict"
        )
    return [r.model_dump(mode="json") for r in results], len(seen)


def _compare(tmp_path, definition, monkeypatch) -> tuple[int, int]:
    plain, plain_calls = _analyse(tmp_path, definition, monkeypatch, templates=False)
    fast, fast_calls = _analyse(tmp_path, definition, monkeypatch, templates=True)
    assert fast == plain
    return plain_calls, fast_calls


def test_a_loop_over_experts_is_costed_from_templates_with_the_full_recording_figures(tmp_path, monkeypatch):
    plain_calls, fast_calls = _compare(tmp_path, _definition("moe", MOE), monkeypatch)
    assert fast_calls < plain_calls * 0.7  # each expert whose count lies beyond those recorded is recorded in full


def test_a_loop_that_slices_beside_its_index_variable_is_costed_from_templates(tmp_path, monkeypatch):
    sliced = MOE.replace("gate[e].t()", "gate[e, :, 0:64].t()").replace("down[e].t()", "down[e, ::1].t()")
    plain_calls, fast_calls = _compare(tmp_path, _definition("moe_sliced", sliced), monkeypatch)
    assert fast_calls < plain_calls * 0.7


def test_only_the_hit_experts_weights_count_as_read(tmp_path, monkeypatch):
    fast, _ = _analyse(tmp_path, _definition("moe", MOE), monkeypatch, templates=True)
    t = 96
    activations = t * 64 * 2 + t * 2 * 8 + t * 2 * 2 + t * 64 * 2  # x, ids, w read, out written
    hit_weights = 16 * (32 * 64 + 64 * 32) * 2  # the 16 even experts of 32, gate and down
    assert fast[0]["bytes"] == activations + hit_weights


def test_a_loop_over_the_hit_experts_with_an_index_read_in_python_is_costed_from_templates(tmp_path, monkeypatch):
    plain_calls, fast_calls = _compare(tmp_path, _definition("moe_hit", MOE_OVER_HIT_EXPERTS), monkeypatch)
    assert fast_calls < plain_calls * 0.6


def test_a_body_that_reads_values_into_python_is_recorded_in_full(tmp_path, monkeypatch):
    plain_calls, fast_calls = _compare(tmp_path, _definition("moe_tolist", VALUE_READ_IN_BODY), monkeypatch)
    assert fast_calls == plain_calls


@pytest.mark.parametrize(
    "after",
    [
        "    return out + h.sum()\n",  # a body name read after the loop would keep a template's tensor
        "    del h\n    return out\n",
    ],
)
def test_no_checkpoint_stands_before_a_name_that_lives_on_after_the_loop(after):
    source = with_routed_loops(MOE.replace("    return out\n", after))
    assert source is not None
    assert ".at(2)" not in source  # before `h = ...`: a replay would leave `h` a template's tensor
    assert ".at(3)" in source and ".at(4)" in source


def test_a_body_that_carries_a_value_across_iterations_is_not_rewritten():
    source = textwrap.dedent("""
        import torch

        def run(x, ids):
            acc = torch.zeros(x.shape[1])
            for e in range(4):
                tokens = torch.where(ids == e)[0]
                if tokens.numel() == 0:
                    continue
                acc = acc + x[tokens].sum(0)
            return acc
        """)
    assert with_routed_loops(source) is None


def test_the_loop_variable_is_an_index_variable_and_its_subscripts_go_through_the_loop():
    source = with_routed_loops(MOE)
    assert source is not None
    assert ".index(gate, e, False, ('e',))" in source
    assert ".at(2)" in source and ".end()" in source


def test_without_a_recorder_the_rewritten_loop_computes_what_the_plain_one_does():
    source = MOE.replace("bfloat16", "float32")  # the CPU's first bfloat16 matrix product alone takes a second
    plain, rewritten = {}, {}
    exec(compile(source, "plain.py", "exec"), plain)
    exec(compile(with_routed_loops(source) or "", "rewritten.py", "exec"), rewritten)
    torch.manual_seed(0)
    inputs = plain["get_inputs"]({"t": 40, "e": 32}, "cpu")
    expected = plain["run"](**inputs)
    assert torch.equal(rewritten["run"](**inputs), expected)


def test_a_subscript_with_slices_beside_an_index_variable_compiles_and_computes_the_same():
    """`w[:, e]`, `w[1:, e, ::2]`: a slice is only syntax inside brackets, so the rewritten call takes its value
    (`slice(...)`), even where the reference names something else `slice` (FlashInfer-Bench's MoE problems
    subscript their weights this way; their rewritten source did not compile, and they lost their templates)."""
    source = textwrap.dedent("""
        import torch

        slice = None  # the reference's own name: the rewritten call must not take it

        def run(x, ids, w):
            out = torch.zeros(x.shape[0], w.shape[2])
            for e in range(w.shape[1]):
                idx = torch.where(ids == e)[0]
                if idx.numel() == 0:
                    continue
                h = x[idx] @ w[:, e] + w[1:, e, ::2].sum()
                out.index_add_(0, idx, h)
            return out
        """)
    rewritten_source = with_routed_loops(source)
    assert rewritten_source is not None and ".index(w, (_solbench_routed.builtins.slice(None" in rewritten_source
    plain, rewritten = {}, {}
    exec(compile(source, "plain.py", "exec"), plain)
    exec(compile(rewritten_source, "rewritten.py", "exec"), rewritten)
    torch.manual_seed(0)
    x, ids, w = torch.randn(20, 6), torch.randint(0, 4, (20,)), torch.randn(6, 4, 5)
    assert torch.equal(rewritten["run"](x, ids, w), plain["run"](x, ids, w))


BRANCHING = """
import torch

COUNTS = [3, 4, 5, 6, 20, 2, 30, 7]  # tokens per expert: small ones first, then one beyond the branch

def get_inputs(axes, device):
    t = axes['t']
    ids = torch.cat([torch.full((c,), e) for e, c in enumerate(COUNTS)])
    ids = torch.cat([ids, torch.full((t - ids.numel(),), 99)])
    return {'x': torch.randn(t, 16), 'ids': ids, 'w': torch.randn(8, 16, 16)}

def expert(h, w):
    if h.shape[0] > 8:  # a branch on the routed count the suffix's own source does not show
        return torch.relu(h @ w) @ w
    return h * 2.0

def run(x, ids, w):
    out = torch.zeros_like(x)
    for e in range(w.shape[0]):
        idx = torch.where(ids == e)[0]
        if idx.numel() == 0:
            continue
BODY
    return out
"""


@pytest.mark.parametrize(
    "body",
    [
        "        h = expert(x[idx], w[e])\n        out.index_add_(0, idx, h)\n",
        "        h = (x[idx] @ w[e]) if idx.shape[0] > 8 else x[idx] * 2.0\n        out.index_add_(0, idx, h)\n",
    ],
    ids=["in-a-helper", "conditional-expression"],
)
def test_a_branch_on_the_routed_count_is_never_carried_across_by_a_template(tmp_path, monkeypatch, body):
    """Predictions stay between the recorded counts, where a branch shows as recordings that disagree; a
    conditional expression keeps the statement out of the template."""
    definition = {
        "name": "branching",
        "axes": {"t": {"type": "var"}},
        "custom_inputs_entrypoint": "get_inputs",
        "inputs": {
            "x": {"shape": ["t", 16], "dtype": "float32"},
            "ids": {"shape": ["t"], "dtype": "int64"},
            "w": {"shape": [8, 16, 16], "dtype": "float32"},
        },
        "outputs": {"out": {"shape": ["t", 16], "dtype": "float32"}},
        "reference": BRANCHING.replace("BODY\n", body),
    }
    plain, _ = _analyse(tmp_path, definition, monkeypatch, templates=False)
    fast, _ = _analyse(tmp_path, definition, monkeypatch, templates=True)
    assert fast == plain and plain[0]["flops_by_class"]["matrix"]
