"""`solbench replay PATH` chooses by what PATH is: a run folder, a bundle file, else a clear refusal."""

from typer.testing import CliRunner

from solbench.cli.app import app
from solbench.cli.common import UsageError
from solbench.service.bundle import BundleError


def test_a_file_that_is_not_a_bundle_is_refused_naming_the_file_and_field(tmp_path):
    path = tmp_path / "traces.json"
    path.write_text('{"format": "something-else"}')
    result = CliRunner().invoke(app, ["replay", str(path)])
    assert isinstance(result.exception, BundleError)
    assert str(path) in str(result.exception) and "format" in str(result.exception)


def test_a_folder_without_a_journal_is_refused_saying_what_replay_expects(tmp_path):
    result = CliRunner().invoke(app, ["replay", str(tmp_path)])
    assert isinstance(result.exception, UsageError)
    assert "journal.jsonl" in str(result.exception) and "bundle" in str(result.exception)
