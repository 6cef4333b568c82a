"""Compulsory bytes count the rows of an input that some op reads: views narrow, other ops read what they see."""

import pytest

from conftest import write_problem
from solbench.hardware import lookup
from solbench.sol import analyze_problem
from solbench.sol.rows import RowSet
from solbench.spec import load_problem


def compulsory(tmp_path, shape: list[int], reference: str) -> int:
    """Bytes for one float32 input `x` of `shape` and whatever `run(x)` returns."""
    definition = {
        "name": "p",
        "axes": {},
        "inputs": {"x": {"shape": [str(d) for d in shape], "dtype": "float32"}},
        "outputs": {"y": {"shape": None, "dtype": "float32"}},
        "reference": "import torch\n" + reference,
    }
    workload = {"uuid": "w", "axes": {}, "inputs": {"x": {"type": "random"}}}
    [result] = analyze_problem(load_problem(write_problem(tmp_path / "p", definition, [workload])), lookup("H200"))
    return result.bytes


ROW = 32 * 4  # one row of a [64, 32] float32 input


@pytest.mark.parametrize(
    "body, rows_read, rows_written",
    [
        ("return x * 2", 64, 64),
        ("return x[:16] * 2", 16, 16),
        ("return x[8:40:4] * 2", 8, 8),
        ("return x[5] + x[-1]", 2, 1),
        ("return x.view(64, 4, 8)[3:5].sum(0)", 2, 1),
        ("return x.unsqueeze(2).transpose(1, 2)[7] * 2", 1, 1),
        ("return x.unbind(0)[9] * 2", 1, 1),
        ("return x.split(16)[1][2:4] * 2", 2, 2),
        ("return x.t()[3] * 2", 64, 2),  # a column touches every row
        ("return x[:, :8] * 2", 64, 16),  # slicing another dim keeps every row
        ("return x[2:4].as_strided((4, 32), (32, 1)) * 2", 64, 4),  # as_strided may reach anywhere
        ("return x[:0].sum(0) + x[3]", 1, 1),  # an empty slice adds no rows
        ("return torch.cat([x[:4], x[10:12]])", 6, 6),  # tensors in a list argument (cat, stack) are read too
        ("return torch.stack([x[1], x[2]]) * 2", 2, 2),
    ],
)
def test_views_narrow_the_rows_read(tmp_path, body, rows_read, rows_written):
    assert compulsory(tmp_path, [64, 32], f"def run(x):\n    {body}\n") == (rows_read + rows_written) * ROW


def test_an_op_with_an_empty_result_reads_nothing(tmp_path):
    """An expert that no token routes to multiplies zero rows by its weights: nothing of them is needed."""
    assert compulsory(tmp_path, [64, 32], "def run(x):\n    return x[:0] @ x.t(), x[1] + 1\n") == 2 * ROW


def test_gather_with_unknown_indices_counts_the_rows_it_copies(tmp_path):
    reference = "def run(x):\n    return x[torch.zeros(5, dtype=torch.long)] * 2\n"
    assert compulsory(tmp_path, [64, 32], reference) == (5 + 5) * ROW


def test_a_mask_index_names_no_rows_by_its_values():
    """`aten.index` takes a bool or uint8 tensor as a mask: its values 0 and 1 are no row numbers (the gather then
    counts the bytes it copies), while an integer index's values are the rows it reads."""
    import torch

    from solbench.sol.rows import gather_index

    x = torch.zeros(64, 32)
    for mask in (torch.ones(64, dtype=torch.uint8), torch.ones(64, dtype=torch.bool)):
        assert gather_index("index", [x, [mask]]) is None
    rows = torch.tensor([3, 9])
    assert gather_index("index", [x, [rows]]) is rows


def test_row_set_counts_distinct_rows():
    rows = RowSet(100)
    rows.add(range(10, 20))
    rows.add(range(15, 30))
    rows.add(range(40, 50, 5))
    rows.add(range(0))
    rows.add_indices([12, 45, 60, 60, 99])
    assert rows.count() == 20 + 2 + 2  # 10..29, 40 and 45, 60 and 99


@pytest.mark.parametrize(
    "rows, gathered, expected",
    [
        (range(64), [0, 3, 63], [0, 3, 63]),
        (range(8, 64), [0, 3, 55], [8, 11, 63]),
        (range(0, 64, 2), [1, 2], [2, 4]),
        (range(64), [-1, 2], [63, 2]),
        (range(16), [], []),
    ],
)
def test_gathered_index_tensors_count_the_rows_their_positions_map_to(rows, gathered, expected):
    """An index tensor handed to the row set counts, when the rows are counted, the input rows its positions map to
    through the rows it counts from (shifted, scaled, negative ones from the end, as a gather's); the values it held
    when it was handed over count, not what the reference writes into it later."""
    import torch

    read = RowSet(64)
    index = torch.tensor(gathered, dtype=torch.int32)
    read.add_gathered(index, rows)
    index.fill_(5)  # written in place after the gather
    read.add_gathered(torch.tensor([[0, 0]]), range(64))  # any shape, repeats, overlaps
    read.add_indices([0, *expected])  # the same rows again: a position mapped elsewhere would count apart
    assert read.count() == len(set(expected) | {0})
    assert read.count() == len(set(expected) | {0})  # counting twice counts the same


def test_gathers_from_different_rows_of_one_input_map_each_through_its_own():
    """Gathers counting from the same rows are mapped together when the rows are counted: each entry still maps
    through the rows it was handed with, whatever order the entries came in, its dtype or its shape."""
    import torch

    read = RowSet(64)
    read.add_gathered(torch.tensor([0, 1]), range(10, 20))
    read.add_gathered(torch.tensor([[0], [-1]], dtype=torch.int32), range(30, 40))
    read.add_gathered(torch.tensor([1, 2]), range(10, 20))
    assert read.count() == len({10, 11, 12, 30, 39})


def test_gathered_positions_are_turned_into_rows_before_they_pile_up(monkeypatch):
    """A loop that gathers a large index per step keeps at most PENDING_GATHERED positions as tensors; the rows
    they read still count once each."""
    import torch

    import solbench.sol.rows as rows_module

    monkeypatch.setattr(rows_module, "PENDING_GATHERED", 100)
    read = RowSet(1000)
    for step in range(10):
        read.add_gathered(torch.arange(step * 30, step * 30 + 60), range(1000))
        assert sum(index.numel() for index, _ in read._gathered) <= 100
    assert read.count() == 10 * 30 + 30


def test_a_gathered_position_outside_the_rows_is_refused_as_before():
    import torch

    read = RowSet(16)
    read.add_gathered(torch.tensor([3, 16]), range(16))
    with pytest.raises(IndexError):
        read.count()
