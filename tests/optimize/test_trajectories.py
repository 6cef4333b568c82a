"""Trajectories: read from optimize journals and env histories, exported as JSONL and read back with the model;
sources that are not runs refused with the file named; a real env session and a real optimize run end to end."""

from __future__ import annotations

import json

import pytest

import solbench
from conftest import make_solution
from optimize.candidates import BROKEN, FAST, HELD_OUT, baselines_file, vector_add
from optimize.constructed_runs import Planned, write_run
from solbench.optimize.env_history import env_history, load_env_history, save_env_history
from solbench.optimize.errors import InvalidRunSource
from solbench.optimize.loop_errors import JournalError
from solbench.optimize.metrics import agent_metrics
from solbench.optimize.trajectory import TRAJECTORY_FORMAT_VERSION, read_trajectories, write_trajectories
from solbench.optimize.trajectory_sources import load_trajectories

HARDWARE = "H100_SXM"


def test_a_journal_becomes_a_trajectory_and_survives_the_round_trip(tmp_path):
    run = write_run(
        tmp_path / "a", [Planned(speedup=2.0), Planned(not_a_solution=True)], final_of=1, held_out_status="PASSED"
    )
    (trajectory,) = load_trajectories([run])
    assert (trajectory.source, trajectory.source_kind, trajectory.agent) == (str(run), "optimize_run", "scripted")
    assert [s.candidate for s in trajectory.steps] == ["1-1", "1-2"]
    first, unreadable = trajectory.steps
    assert first.action is not None and first.action.name == "c1" and first.info is not None and first.info.correct
    assert [f.speedup for f in first.feedback] == [2.0, 2.0]
    assert unreadable.action is None and unreadable.info is None and unreadable.error == "not a solution: bad JSON"
    assert trajectory.final is not None and trajectory.final_candidate == "1-1" and trajectory.final.held_out == ["h"]

    output = write_trajectories(tmp_path / "out" / "t.jsonl", [trajectory, trajectory])
    lines = output.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["format_version"] == TRAJECTORY_FORMAT_VERSION
    assert read_trajectories(output) == [trajectory, trajectory]
    assert load_trajectories([output]) == [trajectory, trajectory]  # report reads exported trajectories too


def test_a_later_format_version_is_refused_with_file_and_line(tmp_path):
    (trajectory,) = load_trajectories([write_run(tmp_path / "a", [Planned()], final_of=1)])
    line = json.loads(trajectory.model_dump_json())
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({**line, "format_version": 2}) + "\n")
    with pytest.raises(InvalidRunSource, match=r"t\.jsonl:1: not a trajectory \(format_version"):
        read_trajectories(path)


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("traces.jsonl", '{"definition": "vector_add"}\n', "not a solbench optimize journal"),
        ("journal.jsonl", "", "not a solbench optimize journal"),
        ("binary.jsonl", b"\xff\xfe\x00", "not a solbench optimize journal"),
        ("solution.json", '{"name": "x"}', "not a solbench env history"),
        ("missing.json", None, "no such file or folder"),
        ("empty_folder", "folder", "no optimize run here or below"),
    ],
)
def test_what_is_not_a_run_is_refused_naming_the_path(tmp_path, name, content, reason):
    path = tmp_path / name
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(InvalidRunSource, match=f"{name}: {reason}"):
        load_trajectories([path])


def test_a_journal_damaged_past_its_first_line_names_the_line(tmp_path):
    run = write_run(tmp_path / "a", [Planned()], final_of=1)
    with (run / "journal.jsonl").open("a") as journal:
        journal.write('{"type": "mystery"}\n')
    with pytest.raises(JournalError, match=r"journal\.jsonl:4: not a journal record"):
        load_trajectories([run])


@pytest.mark.slow
def test_a_real_env_session_saved_as_history_exports_and_reports(tmp_path, fast_config):
    problem = vector_add(tmp_path / "vector_add", 1000, 4099, held_out=True)
    baselines = baselines_file(tmp_path / "baselines.json", HARDWARE, "n1000", "n4099", HELD_OUT)
    with solbench.make(
        problem, hardware=HARDWARE, config=fast_config, held_out=[HELD_OUT], baselines=baselines, reward="gated_sol"
    ) as env:
        card = env.reset(seed=3)
        fast = env.step(make_solution(FAST, name="fast"))
        broken = env.step(make_solution(BROKEN, name="broken"))
        final = env.finalize()
        path = save_env_history(tmp_path / "history.json", env_history(env, card=card, final=final))
    assert load_env_history(path).steps == [fast, broken]

    (trajectory,) = load_trajectories([path])
    assert (trajectory.source_kind, trajectory.problem, trajectory.set) == ("env_history", "vector_add", "all")
    assert trajectory.card == card and trajectory.reward_kind == "gated_sol"
    assert [(s.candidate, s.action.name if s.action else None) for s in trajectory.steps] == [
        ("1", "fast"),
        ("2", "broken"),
    ]
    assert trajectory.steps[0].feedback == fast.feedback and trajectory.steps[1].reward == 0.0
    assert trajectory.final_candidate == "1" and trajectory.final is not None
    assert trajectory.final.held_out == [HELD_OUT] and trajectory.final.traces == []

    exported = write_trajectories(tmp_path / "t.jsonl", [trajectory])
    assert read_trajectories(exported) == [trajectory]
    (metrics,) = agent_metrics([trajectory], pass_k=(1, 2)).problems
    assert (metrics.samples, metrics.correct_samples, metrics.final_correct) == (2, 1, int(final.correct))
    assert metrics.pass_at_k == {"1": 0.5, "2": 1.0}
