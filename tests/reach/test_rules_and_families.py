"""The classification rules, op families and time attribution, on op records written by hand (no torch, no
profile)."""

import json

import pytest

from solbench.reach.attribution import UNATTRIBUTED, attribute
from solbench.reach.built_model import DepthScaling
from solbench.reach.errors import ReachError
from solbench.reach.families import family_of, pass_of, width_of
from solbench.reach.profile import Profile, ProfiledOp
from solbench.reach.rules import ADDRESSABLE, DEFAULT_RULES, FRAMEWORK, load_rules


def call(name, *, modules=(), ancestors=(), backward_of=None, shapes=((4, 256),)):
    return ProfiledOp(
        step=0, name=name, self_us=1.0, shapes=shapes, modules=modules, ancestors=ancestors, backward_of=backward_of
    )


@pytest.mark.parametrize(
    "name, expected",
    [
        ("aten::addmm", "gemm"),
        ("aten::bmm", "gemm"),
        ("aten::_scaled_dot_product_flash_attention_for_cpu", "attention"),
        ("aten::convolution", "convolution"),
        ("aten::mkldnn_convolution", "convolution"),
        ("c10d::allreduce_", "collective"),
        ("aten::mul", ADDRESSABLE),
        ("aten::_embedding_bag", ADDRESSABLE),
        ("Optimizer.step#AdamW.step", FRAMEWORK),
    ],
)
def test_default_rules_class_by_name(name, expected):
    assert DEFAULT_RULES.classify(name, ()) == expected


def test_glue_inside_a_vendor_op_takes_its_class_and_addressable_patterns_win():
    assert DEFAULT_RULES.classify("aten::copy_", ("aten::linear", "aten::addmm")) == "gemm"
    assert DEFAULT_RULES.classify("aten::copy_", ("aten::layer_norm",)) == ADDRESSABLE
    forced = DEFAULT_RULES.merged(addressable=["aten::addmm"])
    assert forced.classify("aten::addmm", ()) == ADDRESSABLE


def test_a_rules_file_replaces_the_classes_it_names(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"classes": {"embedding": ["aten::*embedding_bag*"], "collective": []}}))
    rules = load_rules(path)
    assert rules.classify("aten::_embedding_bag", ()) == "embedding"
    assert rules.classify("c10d::allreduce_", ()) == FRAMEWORK  # the class was dropped
    assert rules.classify("aten::mm", ()) == "gemm"  # untouched classes stay


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("[1]", "expected an object"),
        ('{"classes": {"gemm": "aten::mm"}}', "list of op-name globs"),
        ('{"classes": {"addressable": []}}', "'addressable' list"),
        ("{", "cannot read"),
    ],
)
def test_bad_rules_files_name_the_file(tmp_path, content, fragment):
    path = tmp_path / "rules.json"
    path.write_text(content)
    with pytest.raises(ReachError, match=fragment):
        load_rules(path)


def test_families_come_from_op_name_then_backward_node_then_module():
    assert family_of(call("aten::_embedding_bag", modules=("EmbeddingBag",))) == "embedding_bag"
    assert family_of(call("aten::index_select", backward_of="EmbeddingBagBackward0")) == "embedding_bag"
    assert family_of(call("aten::mul", modules=("LlamaRMSNorm", "LlamaDecoderLayer"))) == "rmsnorm"
    assert family_of(call("aten::mul", modules=("SiLU", "LlamaMLP"))) == "activation"
    assert family_of(call("aten::mul", modules=("ReLU", "DenseArch")), {"DenseArch": "mlp"}) == "mlp"
    assert family_of(call("aten::add", modules=("LlamaDecoderLayer",))) == "elementwise"
    assert family_of(call("aten::copy_")) == "copy"
    assert family_of(call("aten::binary_cross_entropy_with_logits")) == "loss"
    assert family_of(call("aten::nll_loss_forward")) == "cross_entropy"
    step = call("aten::add_", ancestors=("Optimizer.step#AdamW.step", "aten::_foreach_add_"))
    assert pass_of(step) == "optimizer" and family_of(step) == "optimizer"
    assert pass_of(call("aten::mul", backward_of="MulBackward0")) == "backward"
    assert width_of(call("aten::mul", shapes=((), (2, 8, 3456)))) == 3456


def test_the_full_depth_factor_multiplies_only_the_repeated_layers_ops():
    """The full-depth estimate scales what each decoder layer runs by published / kept layers; what runs once
    per model (embedding, final norm, LM head) is counted once, else the projection overstates their share."""

    def timed(name, self_us, *modules):
        return ProfiledOp(step=0, name=name, self_us=self_us, shapes=(), modules=modules, ancestors=())

    in_layer = ("LlamaDecoderLayer", "LlamaModel", "LlamaForCausalLM")
    calls = [
        timed("aten::mul", 10.0, "LlamaRMSNorm", *in_layer),
        timed("aten::addmm", 20.0, "Linear", *in_layer),
        # once per model, never scaled: embedding, final norm, LM head
        timed("aten::embedding", 5.0, "Embedding", "LlamaModel"),
        timed("aten::mul", 3.0, "LlamaRMSNorm", "LlamaModel"),
        timed("aten::addmm", 40.0, "Linear", "LlamaForCausalLM"),
    ]
    profile = Profile(calls=calls, step_us=[100.0], wall_us=[100.0], device="cpu", warmup=0)
    result = attribute(profile, DEFAULT_RULES, depth=DepthScaling("*DecoderLayer", kept=1, published=16))
    assert result.classes[ADDRESSABLE] == [18.0] and result.classes["gemm"] == [60.0]  # as measured
    assert result.full_depth[ADDRESSABLE] == [10.0 * 16 + 5.0 + 3.0] and result.full_depth["gemm"] == [20.0 * 16 + 40.0]
    assert result.full_depth[UNATTRIBUTED] == [22.0]


def test_a_problem_folder_whose_definition_is_not_an_object_is_one_clear_error(tmp_path):
    from solbench.reach.errors import ReachError
    from solbench.reach.suite_index import load_suite

    folder = tmp_path / "L1" / "p"
    folder.mkdir(parents=True)
    (folder / "definition.json").write_text("[]")
    (folder / "workload.jsonl").write_text("")
    with pytest.raises(ReachError, match="definition.json: expected a JSON object"):
        load_suite(tmp_path)
