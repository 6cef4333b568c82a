"""The loop's parts on their own: journal lines and kills, the round folder's candidate files and problem hashes,
agent specs, built-in agents' candidates, the `solbench test` channel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from conftest import VECTOR_ADD, vector_workloads, write_problem


def test_journal_ignores_a_partial_last_line_and_cuts_it_before_appending(tmp_path):
    from solbench.optimize.journal import Journal, RoundFinished, RoundStarted

    journal = Journal(tmp_path / "journal.jsonl")
    journal.open()
    journal.append(RoundStarted(round=1))
    with open(journal.path, "a") as handle:  # a kill in the middle of a write
        handle.write('{"type": "round_fini')
    assert [r.type for r in journal.read()] == ["round_started"]
    journal.open()
    journal.append(RoundFinished(round=1))
    assert [r.type for r in journal.read()] == ["round_started", "round_finished"]


def test_journal_refuses_a_line_that_is_not_a_record(tmp_path):
    from solbench.optimize.journal import Journal
    from solbench.optimize.loop_errors import JournalError

    path = tmp_path / "journal.jsonl"
    path.write_text('{"type": "round_started", "round": 1}\n{"type": "lunch"}\n')
    with pytest.raises(JournalError, match="journal.jsonl:2: not a journal record"):
        Journal(path).read()


def test_resume_state_takes_up_the_unfinished_round():
    from solbench.optimize.journal import AgentFinished, CandidateRecord, RoundFinished, RoundStarted
    from solbench.optimize.resume import run_state

    state = run_state(
        [
            RoundStarted(round=1),
            AgentFinished(round=1),
            CandidateRecord(round=1, k=1, file="s", result={}),
            RoundFinished(round=1),
            RoundStarted(round=2),
            AgentFinished(round=2),
        ]
    )
    assert state.next_round == 2 and state.agent_done(2) and list(state.candidates) == ["1-1"]
    assert run_state([RoundStarted(round=1), RoundFinished(round=1)]).next_round == 2


def test_candidate_files_are_numbered_in_order_with_their_stated_techniques(tmp_path):
    from solbench.optimize.workspace import candidate_files

    (tmp_path / "solutions").mkdir()
    for path in ("solution.json", "solutions/b.json", "solutions/a.json"):
        (tmp_path / path).write_text("{}")
    (tmp_path / "strategy.json").write_text(json.dumps({"technique": "vectorised loads"}))
    (tmp_path / "solutions" / "a.strategy.json").write_text(json.dumps({"technique": "tiling"}))
    found = candidate_files(tmp_path)
    assert [(c.k, str(c.path), c.technique) for c in found] == [
        (1, "solution.json", "vectorised loads"),
        (2, "solutions/a.json", "tiling"),
        (3, "solutions/b.json", None),
    ]


def test_changed_problem_files_names_edits_removals_and_additions(tmp_path):
    from solbench.optimize.workspace import ProblemFiles, changed_problem_files, write_problem_files

    hashes = write_problem_files(
        tmp_path / "problem", ProblemFiles(definition=VECTOR_ADD, workloads=[], sol={}, hardware={})
    )
    assert changed_problem_files(tmp_path, hashes) == []
    (tmp_path / "problem" / "reference.py").write_text("def run(x, y):\n    return x\n")
    (tmp_path / "problem" / "sol.json").unlink()
    (tmp_path / "problem" / "extra.txt").write_text("x")
    assert changed_problem_files(tmp_path, hashes) == ["extra.txt", "reference.py", "sol.json"]


@pytest.mark.parametrize("spec, reason", [("  ", "empty command"), ("builtin:magic", "unknown built-in agent")])
def test_a_bad_agent_spec_is_refused(spec, reason):
    from solbench.optimize.agents import agent_from_spec
    from solbench.optimize.loop_errors import AgentError

    with pytest.raises(AgentError, match=reason):
        agent_from_spec(spec)


def test_builtin_compile_proposes_each_torch_compile_mode_once(tmp_path):
    from solbench.optimize.agents import COMPILE_MODES, agent_from_spec
    from solbench.spec import Solution

    write_problem(tmp_path / "problem", VECTOR_ADD, vector_workloads(8))
    agent = agent_from_spec("builtin:compile")
    outcome = agent.propose(
        tmp_path,
        round_number=1,
        candidates=2,
        environment={},
        timeout_s=1,
        log_path=tmp_path / "log",
        serve=lambda: None,
    )
    written = sorted((tmp_path / "solutions").glob("??.json"))
    sources = [Solution.model_validate_json(p.read_text()).sources[0].content for p in written]
    assert outcome.exit_code == 0 and len(sources) == 2
    assert [f"mode={m!r}" in s for s, m in zip(sources, COMPILE_MODES)] == [True, True]
    assert (
        json.loads((tmp_path / "solutions" / "01.strategy.json").read_text())["technique"]
        == "torch.compile mode=default"
    )
    assert not agent.is_finished(2, 2) and agent.is_finished(3, 2)
    assert agent_from_spec("builtin:reference").is_finished(2, 4)


def test_builtin_reference_packages_the_reference_for_the_loops_device(tmp_path):
    """On the CPU (SOLBENCH_DEVICE=cpu) a reference naming the CUDA device is proposed in its CPU-runnable form."""
    from solbench.optimize.agents import agent_from_spec
    from solbench.spec import Solution

    names_cuda = {
        **VECTOR_ADD,
        "reference": "import torch\n\ndef run(x, y):\n    return x + y + torch.zeros(1, device='cuda')\n",
    }
    write_problem(tmp_path / "problem", names_cuda, vector_workloads(8))
    agent_from_spec("builtin:reference").propose(
        tmp_path,
        round_number=1,
        candidates=1,
        environment={"SOLBENCH_DEVICE": "cpu"},
        timeout_s=1,
        log_path=tmp_path / "log",
        serve=lambda: None,
    )
    [written] = sorted((tmp_path / "solutions").glob("??.json"))
    source = Solution.model_validate_json(written.read_text()).sources[0].content
    assert "'cuda'" not in source and "'cpu'" in source


def test_the_test_channel_carries_a_request_to_the_loop_and_its_answer_back(tmp_path):
    from solbench.optimize.channel import ChannelServer, find_round_folder, send_request

    server = ChannelServer(tmp_path, lambda request: {"echo": request["n"] + 1})
    server.open(1)
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            server.serve()
            stop.wait(0.02)

    thread = threading.Thread(target=loop)
    thread.start()
    try:
        (tmp_path / "deeper").mkdir()
        assert find_round_folder(tmp_path / "deeper", {}) == tmp_path
        assert send_request(tmp_path, {"n": 41}, timeout_s=10) == {"echo": 42}
    finally:
        stop.set()
        thread.join()
        server.close()


@pytest.mark.slow
def test_solbench_test_outside_a_round_says_where_to_run_it(tmp_path):
    (tmp_path / "solution.json").write_text("{}")
    environment = {k: v for k, v in os.environ.items() if k != "SOLBENCH_WORKSPACE"}
    result = subprocess.run(
        [sys.executable, "-m", "solbench", "test", "solution.json"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "not inside a round folder of a running `solbench optimize`" in result.stderr


def test_an_orphaned_agent_group_is_ended_only_if_its_leader_is_the_same_process():
    from solbench.optimize.agents import end_orphaned_group, process_start_ticks

    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        ticks = process_start_ticks(process.pid)
        assert ticks is not None
        assert not end_orphaned_group(process.pid, ticks + 1)  # a reused id: another process, left alone
        assert process.poll() is None
        assert end_orphaned_group(process.pid, ticks)
        assert process.wait(10) == -9
    finally:
        process.kill()
        process.wait()
