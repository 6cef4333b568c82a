"""The bundled suite's folders: each one a whole problem (a rename that left a workload file behind is not)."""

from pathlib import Path

PROBLEMS = Path(__file__).resolve().parents[2] / "problems"


def test_every_folder_of_the_bundled_suite_holds_a_definition():
    folders = [p for p in PROBLEMS.glob("*/*") if p.is_dir()]
    assert len(folders) >= 260
    assert [str(p.relative_to(PROBLEMS)) for p in folders if not (p / "definition.json").is_file()] == []
