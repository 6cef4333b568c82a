"""The fast tier (`pytest -m "not slow"`) still tests every layer, end to end included (docs/testing.md)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = sorted(p.name for p in (ROOT / "src" / "solbench").iterdir() if (p / "__init__.py").is_file())

# Cheap representatives of the expensive kinds: keep them unmarked, or name others here.
REPRESENTATIVES = {
    "a real sandbox evaluation that passes": (
        "tests/evaluation/test_statuses.py::test_value_returning_solution_passes_with_timing"
    ),
    "the CLI in a subprocess": "tests/cli/test_eval_command.py::test_bad_input_is_one_line_and_exit_2",
    "the HTTP API in process": (
        "tests/service/test_door.py::test_another_users_private_submission_answers_as_if_it_did_not_exist"
    ),
    "every API route's access rules": "tests/service/test_api_access.py::test_every_api_route_has_access_rules",
}


def fast_tier() -> list[str]:
    collected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-m",
            "not slow",
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
            "tests",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    return [line for line in collected.stdout.splitlines() if "::" in line]


def test_the_fast_tier_covers_every_layer_and_keeps_its_representatives():
    tests = fast_tier()
    per_layer = {layer: [t for t in tests if t.startswith(f"tests/{layer}/")] for layer in LAYERS}
    missing = [layer for layer, found in per_layer.items() if not found]
    assert not missing, f"no test of these layers runs in the fast tier (pytest -m 'not slow'): {missing}"
    for what, test in REPRESENTATIVES.items():
        assert any(t == test or t.startswith(test + "[") for t in tests), f"{what} ({test}) left the fast tier"
