"""The problem card holds the HardwareSpec T_SOL is computed with: nothing of it is dropped on the way out."""

from dataclasses import fields

import pytest

from optimize.candidates import vector_add
from solbench.hardware import lookup
from solbench.hardware.spec import HardwareSpec
from solbench.optimize import BudgetLeft, ProblemCard
from solbench.optimize.contract import solution_contract
from solbench.spec import load_problem


@pytest.mark.parametrize("hardware", ["H100_SXM", "B200_1500MHz"])
def test_every_field_of_the_hardware_spec_reaches_the_cards_output(tmp_path, hardware):
    spec = lookup(hardware)
    problem = load_problem(vector_add(tmp_path / "vector_add", 1000))
    definition = problem.definition
    card = ProblemCard(
        problem=definition.name,
        definition=definition,
        reference_source=definition.reference,
        workloads=[],
        held_out_workloads=0,
        hardware=spec,
        device="cpu",
        languages=["python"],
        reward="sol",
        contract=solution_contract(problem, problem.workloads, "cpu"),
        budget_left=BudgetLeft(),
    )
    shown = card.model_dump(mode="json")["hardware"]
    assert set(shown) == {field.name for field in fields(HardwareSpec)}
    for field in fields(HardwareSpec):
        value = getattr(spec, field.name)
        assert shown[field.name] == (list(value) if isinstance(value, tuple) else value), field.name
    assert shown["special_ops_per_s"] > 0  # the SFU rate T_SOL charges transcendentals at
    assert ProblemCard.model_validate_json(card.model_dump_json()).hardware == spec
