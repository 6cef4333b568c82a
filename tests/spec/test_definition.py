"""Reading a definition's ``KEY:VALUE`` tags, from the model and from raw JSON alike."""

from conftest import VECTOR_ADD
from solbench.spec.definition import Definition, tag_value


def test_tag_gives_the_first_value_of_its_key():
    tags = ["model:llama-3-8b", "set:L1", "config:hidden_size=4096", "set:L2"]
    definition = Definition.model_validate({**VECTOR_ADD, "tags": tags})
    assert definition.tag("set") == "L1"
    assert definition.tag("config") == "hidden_size=4096"
    assert definition.tag("domain") is None


def test_a_key_matches_only_up_to_its_colon():
    assert tag_value(["settings:x", "set:"], "set") == ""
    assert tag_value(["settings:x"], "set") is None


def test_raw_json_entries_that_are_not_strings_are_skipped():
    assert tag_value([3, None, {"set": "x"}, "set:Quant"], "set") == "Quant"
