"""`solbench reach` end to end: a user's module to a JSON report and charts, then two reports compared."""

import json
import sys

import pytest
from typer.testing import CliRunner

from solbench.cli.app import app, main

pytestmark = pytest.mark.slow

FACTORY = (
    "import torch\n\ndef make():\n"
    "    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Softmax(-1)), "
    "torch.randn(32, 64)\n"
)


def test_reach_writes_a_report_and_charts_and_compares_reports(tmp_path):
    (tmp_path / "mine.py").write_text(FACTORY)
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "reach",
            f"module:{tmp_path / 'mine.py'}:make",
            "--steps",
            "2",
            "--warmup",
            "1",
            "--problems",
            str(tmp_path),
            "--assume-speedup",
            "1.5",
            "-o",
            str(tmp_path / "out" / "mine"),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "mine.json").read_text())
    assert report["format"] == "solbench-reach/1" and report["projection"]["gain"] == 0.0  # nothing covered
    assert (tmp_path / "out" / "mine.png").read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in (tmp_path / "out" / "mine.svg").read_text()
    assert "addressable fraction" in result.output

    chart = tmp_path / "both.svg"
    result = runner.invoke(
        app,
        [
            "reach",
            "--compare",
            str(tmp_path / "out" / "mine.json"),
            "--compare",
            str(tmp_path / "out" / "mine.json"),
            "-o",
            str(chart),
        ],
    )
    assert result.exit_code == 0, result.output
    assert chart.exists() and chart.with_suffix(".png").exists()


def _run_main(monkeypatch, capsys, *args) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["solbench", *map(str, args)])
    with pytest.raises(SystemExit) as stopped:
        main()
    return stopped.value.code, capsys.readouterr().err


def test_reach_usage_errors_exit_2(tmp_path, monkeypatch, capsys):
    assert _run_main(monkeypatch, capsys, "reach")[0] == 2
    code, err = _run_main(monkeypatch, capsys, "reach", "--compare", tmp_path / "absent.json", "-o", tmp_path / "c.svg")
    assert code == 2 and "does not exist" in err
