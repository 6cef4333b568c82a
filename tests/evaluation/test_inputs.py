"""Input generation: private generator, secret seed, role-aware ranges, custom and safetensors inputs."""

import pytest
import torch

from conftest import write_problem
from solbench.evaluation.reference import ReferenceProgram
from solbench.spec import ConstraintError, SpecError, load_problem
from solbench.spec.inputs import InputContext, generate_inputs

PAGED = {
    "name": "paged_gather",
    "axes": {
        "batch_size": {"type": "var"},
        "num_pages": {"type": "var"},
        "len_indptr": {"type": "var"},
        "num_kv_indices": {"type": "var"},
        "head_dim": {"type": "const", "value": 8},
    },
    "constraints": ["len_indptr == batch_size + 1", "num_kv_indices == kv_indptr[-1].item()"],
    "inputs": {
        "k_cache": {"shape": ["num_pages", "head_dim"], "dtype": "float32"},
        "kv_indptr": {"shape": ["len_indptr"], "dtype": "int32"},
        "kv_indices": {"shape": ["num_kv_indices"], "dtype": "int32", "description": "Page IDs, < num_pages"},
        "variance": {"shape": ["batch_size"], "dtype": "float32"},
        "probs": {"shape": ["batch_size", "head_dim"], "dtype": "float32"},
        "mask": {"shape": ["batch_size"], "dtype": "bool"},
        "scale": {"shape": None, "dtype": "float32"},
    },
    "outputs": {"out": {"shape": ["num_kv_indices", "head_dim"], "dtype": "float32"}},
    "reference": "def run(k_cache, kv_indptr, kv_indices, variance, probs, mask, scale):\n"
    "    return k_cache[kv_indices.long()] * scale\n",
}


def _inputs(tmp_path, definition, workload, seed=1):
    problem = load_problem(write_problem(tmp_path / definition["name"], definition, [workload]))
    reference = ReferenceProgram(problem.definition, "cpu")
    context = InputContext(problem, problem.workloads[0], problem.axes_of(problem.workloads[0]), "cpu")
    return dict(zip(problem.definition.inputs, generate_inputs(context, seed, reference.module)))


def _paged_workload(**scalar):
    inputs = {name: {"type": "random"} for name in PAGED["inputs"]}
    inputs["scale"] = {"type": "scalar", "value": 0.5} if scalar else {"type": "random"}
    return {
        "uuid": "w",
        "axes": {"batch_size": 4, "num_pages": 50, "len_indptr": 5, "num_kv_indices": 37},
        "inputs": inputs,
    }


def test_role_aware_ranges(tmp_path):
    values = _inputs(tmp_path, PAGED, _paged_workload())
    indptr, indices = values["kv_indptr"], values["kv_indices"]
    assert indptr[0] == 0 and indptr[-1] == 37 and bool((indptr[1:] >= indptr[:-1]).all())
    assert int(indices.min()) >= 0 and int(indices.max()) < 50
    assert bool((values["variance"] > 0).all())
    assert torch.allclose(values["probs"].sum(-1), torch.ones(4))
    assert values["mask"].dtype == torch.bool
    assert isinstance(values["scale"], float)


def test_seed_decides_inputs_without_touching_the_global_rng(tmp_path):
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    first = _inputs(tmp_path, PAGED, _paged_workload(), seed=7)
    again = _inputs(tmp_path, PAGED, _paged_workload(), seed=7)
    other = _inputs(tmp_path, PAGED, _paged_workload(), seed=8)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert torch.equal(first["k_cache"], again["k_cache"])
    assert not torch.equal(first["k_cache"], other["k_cache"])


def test_scalar_inputs_pass_their_value(tmp_path):
    assert _inputs(tmp_path, PAGED, _paged_workload(scalar=True))["scale"] == 0.5


def test_axis_constraint_violation_is_reported_at_load(tmp_path):
    workload = _paged_workload()
    workload["axes"]["len_indptr"] = 9
    with pytest.raises(
        ConstraintError,
        match=r"workload.jsonl:1: constraints\[0\]: workload w: "
        r"'len_indptr == batch_size \+ 1' does not hold",
    ):
        _inputs(tmp_path, PAGED, workload)


def test_data_constraint_violation_is_reported(tmp_path):
    definition = dict(PAGED, constraints=["num_kv_indices == kv_indptr[-1].item() + 1"])
    with pytest.raises(ConstraintError, match=r"constraints\[0\]: .* does not hold for workload w"):
        _inputs(tmp_path, definition, _paged_workload())


CUSTOM = {
    "name": "custom",
    "axes": {"N": {"type": "var"}},
    "custom_inputs_entrypoint": "make",
    "inputs": {"a": {"shape": ["N"], "dtype": "float32"}},
    "outputs": {"b": {"shape": ["N"], "dtype": "float32"}},
    "reference": "import torch\ndef make(axes, device):\n    return {'a': torch.rand(axes['N'], device=device)}\n"
    "def run(a):\n    return a * 2\n",
}


def test_custom_entrypoint_is_seeded_secretly_and_restores_the_global_rng(tmp_path):
    workload = {"uuid": "w", "axes": {"N": 16}, "inputs": {"a": {"type": "custom"}}}
    torch.manual_seed(0)
    expected_next = torch.rand(3)
    torch.manual_seed(0)
    first = _inputs(tmp_path, CUSTOM, workload, seed=11)["a"]
    assert torch.equal(torch.rand(3), expected_next)  # the global stream went on as if nothing happened
    assert torch.equal(first, _inputs(tmp_path, CUSTOM, workload, seed=11)["a"])
    assert not torch.equal(first, _inputs(tmp_path, CUSTOM, workload, seed=12)["a"])


def test_safetensors_inputs_load_and_mismatches_are_named(tmp_path):
    from safetensors.torch import save_file

    definition = {
        "name": "st",
        "axes": {"N": {"type": "var"}},
        "inputs": {"a": {"shape": ["N"], "dtype": "float32"}},
        "outputs": {"b": {"shape": ["N"], "dtype": "float32"}},
        "reference": "def run(a):\n    return a + 1\n",
    }
    data = tmp_path / "data"
    data.mkdir()
    save_file({"a": torch.arange(6, dtype=torch.float32)}, str(data / "blob.safetensors"))
    workload = {
        "uuid": "w",
        "axes": {"N": 6},
        "inputs": {"a": {"type": "safetensors", "path": "data/blob.safetensors", "tensor_key": "a"}},
    }
    assert torch.equal(_inputs(tmp_path, definition, workload)["a"], torch.arange(6, dtype=torch.float32))
    workload["axes"]["N"] = 5
    with pytest.raises(SpecError, match=r"inputs\.a: .*holds shape \(6,\), definition says \(5,\)"):
        _inputs(tmp_path, definition, workload)
    workload["axes"]["N"] = 6
    workload["inputs"]["a"]["tensor_key"] = "zzz"
    with pytest.raises(SpecError, match=r"inputs\.a\.tensor_key: 'zzz' not in"):
        _inputs(tmp_path, definition, workload)


MIXED = {
    "name": "mixed",
    "axes": {"N": {"type": "var"}},
    "custom_inputs_entrypoint": "make",
    "inputs": {
        "x": {"shape": ["N"], "dtype": "float32"},
        "w": {"shape": ["N"], "dtype": "float32"},
        "noise": {"shape": ["N"], "dtype": "float32"},
        "eps": {"shape": None, "dtype": "float32"},
    },
    "outputs": {"y": {"shape": ["N"], "dtype": "float32"}},
    # The entrypoint sees the scalars (x is filled with eps) and also offers values the workload
    # does not ask of it (noise, eps): those must not be used.
    "reference": "import torch\ndef make(axes_and_scalars, device):\n"
    "    n, eps = axes_and_scalars['N'], axes_and_scalars['eps']\n"
    "    return {'x': torch.full((n,), eps, device=device), 'w': torch.arange(n, dtype=torch.float32),\n"
    "            'noise': torch.zeros(n), 'eps': 99.0}\n"
    "def run(x, w, noise, eps):\n    return x * w + noise + eps\n",
}


def test_custom_inputs_mix_with_scalar_and_random_ones(tmp_path):
    workload = {
        "uuid": "w",
        "axes": {"N": 8},
        "inputs": {
            "x": {"type": "custom"},
            "w": {"type": "custom"},
            "noise": {"type": "random"},
            "eps": {"type": "scalar", "value": 0.25},
        },
    }
    values = _inputs(tmp_path, MIXED, workload)
    assert torch.equal(values["x"], torch.full((8,), 0.25))
    assert torch.equal(values["w"], torch.arange(8, dtype=torch.float32))
    assert values["noise"].shape == (8,) and bool((values["noise"] != 0).any())
    assert values["eps"] == 0.25
