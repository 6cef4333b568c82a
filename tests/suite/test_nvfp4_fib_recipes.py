"""The NVFP4 and FlashInfer-Bench serving problems: their quantiser agrees with the CPU emulation's decoding,
and generated routing leaves no decision near a tie."""

import shutil

import pytest
import torch

from solbench.spec.definition import Definition
from solbench.spec.nvfp4 import unpack_fp4
from solbench.spec.reference_code import import_reference

from .suite_folders import made_by


@pytest.fixture
def reference():
    folders = []

    def load(draft):
        module, folder = import_reference(Definition.model_validate(draft.definition()), "cpu")
        folders.append(folder)
        return module

    yield load
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def _draft(drafts, fragment):
    return next(d for d in drafts if fragment in d.name)


def test_nvfp4_quantiser_round_trips_within_a_scale_unit_and_decodes_as_the_emulation(reference):
    ref = reference(_draft(made_by("nvfp4"), "rmsnorm_quant"))
    torch.manual_seed(0)
    x = torch.randn(4, 64)
    input_scale = torch.tensor([8.0 / (6 * 448)])
    codes, sf = ref._quantize(x, input_scale)
    assert torch.equal(ref._fp4_values(codes, torch.float32), unpack_fp4(codes))
    decoded = ref._dequant(codes, sf, torch.float32) * input_scale
    step = (sf.to(torch.float32) * input_scale).repeat_interleave(16, dim=-1)  # the largest E2M1 gap is 2 units
    assert torch.all((decoded - x).abs() <= step + 1e-6)  # half the widest E2M1 gap (4 -> 6)


def test_fp8_moe_routing_logits_keep_every_decision_away_from_a_tie(reference):
    ref = reference(_draft(made_by("fib_serving"), "moe_fp8_block_scale"))
    torch.manual_seed(1)
    axes = {"seq_len": 64, "num_experts": 256, "num_local_experts": 2, "hidden_size": 256, "intermediate_size": 128}
    inputs = ref.make_inputs(axes, "cpu")
    biased = torch.sigmoid(inputs["routing_logits"]) + inputs["routing_bias"].float()
    ordered = biased.sort(dim=1, descending=True).values
    assert float((ordered[:, :-1] - ordered[:, 1:]).min()) > 1e-4
    groups = torch.topk(biased.view(64, 8, 32), k=2, dim=2).values.sum(dim=2).sort(dim=1, descending=True).values
    assert float((groups[:, :-1] - groups[:, 1:]).min()) > 1e-4
    chosen = torch.topk(biased, k=8, dim=1).indices
    assert int(((chosen < 2).sum(dim=1) >= 1).sum()) >= 32  # most tokens route one of their choices to this rank
