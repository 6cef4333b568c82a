"""What a ranking counts, end to end from a job's stored result: the secret held-out run must have passed, and a
submission a guard or the speed-of-light floor flagged is hidden (hacked) with the evidence as its reason.

Jobs run in process through `execute_submission` (claim, score, store) on a migrated SQLite database; the evaluation
itself is replaced by traces with chosen statuses and times (as tests/service/test_jobs.py does), since what is
tested is what the board does with each outcome.
"""

from __future__ import annotations

import pytest

from service.conftest import HARDWARE, add_solution, fast_settings, settings_model
from solbench.service import queries
from solbench.service.catalog import current_version, import_suites
from solbench.service.hacked import flagged_submissions, hacked_state
from solbench.service.jobs import WorkerInfo, execute_submission
from solbench.service.models import Submission, User
from solbench.spec import Trace

WORKER = WorkerInfo(name="test-worker", hardware=HARDWARE, device="cpu")
USERS = ("ann", "bob", "cat", "dan", "eve")


@pytest.fixture
def service(tmp_path, database):
    settings = settings_model(fast_settings(tmp_path))  # one held-out workload per problem version
    import_suites(database, settings.suite_folders(), "secret", settings.held_out_per_problem)
    with database.begin() as session:
        session.add_all(User(name=name) for name in USERS)
    return settings, database


@pytest.fixture
def outcomes(monkeypatch):
    """Replaces the evaluation: `outcomes[(user, "public" | "held_out")]` is the list of (status, latency_ms, rule)
    per workload for that user's next submission; a missing held-out entry means the held-out run made no trace."""
    import solbench.api
    from solbench.spec.trace import Correctness, Environment, Evaluation, EvaluationDetails, Performance

    chosen: dict[tuple[str, str], list[tuple[str, float, str | None]]] = {}

    def evaluate(problem, solution, **options):
        held_out = problem.workloads[0].uuid.startswith("held-out-")
        plan = chosen.get((solution.author, "held_out" if held_out else "public"), [])
        return [
            Trace(
                definition=problem.name,
                solution=solution.name,
                workload=workload,
                evaluation=Evaluation(
                    status=status,
                    environment=Environment(hardware="cpu"),
                    timestamp="now",
                    correctness=Correctness() if status in ("PASSED", "INCORRECT_NUMERICAL") else None,
                    performance=Performance(latency_ms=latency_ms, reference_latency_ms=1.0)
                    if status == "PASSED"
                    else None,
                    solbench=EvaluationDetails(
                        harness_version="test",
                        device="cpu",
                        device_name="cpu",
                        failed_rule=rule,
                        failure=f"{rule}: torch.add replaced at kernel.py:3" if rule else None,
                    ),
                ),
            )
            for workload, (status, latency_ms, rule) in zip(problem.workloads, plan, strict=False)
        ]

    monkeypatch.setattr(solbench.api, "evaluate", evaluate)
    return chosen


def submit(service, user: str) -> int:
    settings, factory = service
    with factory.begin() as session:
        owner = session.query(User).filter_by(name=user).one()
        submission = Submission(
            user_id=owner.id,
            problem_version_id=current_version(session, "vector_add").id,
            mode="ranked",
            status="queued",
            solution=add_solution() | {"author": user},
            code_hash="0" * 64,
        )
        session.add(submission)
        session.flush()
        submission_id = submission.id
    execute_submission(factory, submission_id, WORKER, settings=settings)
    return submission_id


def ranked_users(factory) -> list[str]:
    with factory() as session:
        board = queries.problem_leaderboard(session, "vector_add")
    assert board is not None
    return [e.user for e in board.entries] + [f"first:{f.user}" for f in board.firsts]


PASS = ("PASSED", 0.5, None)


def test_a_ranked_score_counts_only_once_its_held_out_run_passed(service, outcomes):
    """ann's held-out run passed; bob's failed its held-out workload; cat's made no held-out trace (not run): only
    ann is ranked, though all three passed every public workload and have a score."""
    settings, factory = service
    outcomes.update(
        {
            ("ann", "public"): [PASS, PASS],
            ("ann", "held_out"): [PASS],
            ("bob", "public"): [PASS, PASS],
            ("bob", "held_out"): [("INCORRECT_NUMERICAL", 0.5, None)],
            ("cat", "public"): [PASS, PASS],
        }
    )
    ids = {user: submit(service, user) for user in ("ann", "bob", "cat")}
    with factory() as session:
        results = {user: session.get(Submission, i).result for user, i in ids.items()}
        assert all(r is not None and r.score is not None for r in results.values())
        assert {user: r.held_out_passed for user, r in results.items()} == {"ann": True, "bob": False, "cat": False}
    assert ranked_users(factory) == ["ann", "first:ann"]


def test_guard_and_floor_flags_hide_a_submission_and_say_why(service, outcomes):
    """bob: a wrong answer on one workload, then a guard's flag on the next (the flag decides the verdict, so the
    earlier failure cannot mask it); cat: measured below the speed-of-light floor; dan: a guard flagged a held-out
    workload. None is ranked, each is listed for admins, and the reason names the rule (a held-out one: no more)."""
    settings, factory = service
    outcomes.update(
        {
            ("ann", "public"): [PASS, PASS],
            ("ann", "held_out"): [PASS],
            ("bob", "public"): [("INCORRECT_NUMERICAL", 0.5, None), ("REWARD_HACK", 0.5, "integrity")],
            ("bob", "held_out"): [PASS],
            ("cat", "public"): [PASS, ("PASSED", 1e-9, None)],
            ("cat", "held_out"): [PASS],
            ("dan", "public"): [PASS, PASS],
            ("dan", "held_out"): [("REWARD_HACK", 0.5, "integrity")],
        }
    )
    ids = {user: submit(service, user) for user in ("ann", "bob", "cat", "dan")}
    assert ranked_users(factory) == ["ann", "first:ann"]
    with factory() as session:
        why = {user: hacked_state(session, session.get(Submission, i)) for user, i in ids.items()}
        listed = [f.id for f in flagged_submissions(session)]
    assert why["ann"] is None
    assert (why["bob"].source, why["bob"].rule, why["bob"].reason) == (
        "guard",
        "integrity",
        "integrity: torch.add replaced at kernel.py:3",
    )
    assert (why["cat"].source, why["cat"].rule) == ("speed_of_light", "speed_of_light")
    assert "below the speed-of-light floor" in why["cat"].reason
    assert (why["dan"].source, why["dan"].rule) == ("guard", "integrity")
    assert "kernel.py" not in why["dan"].reason and "held-out workload" in why["dan"].reason
    assert listed == [ids["dan"], ids["cat"], ids["bob"]]


def test_the_held_out_rule_passes_a_version_that_holds_nothing_out():
    """Versions whose workloads cannot be varied (data files) or a server with held_out_per_problem 0 hold nothing
    out: their run has nothing to fail, so their ranked scores count."""
    from solbench.service.scoring import held_out_run_passed

    def trace(uuid: str, status: str) -> Trace:
        evaluation = {"status": status, "environment": {"hardware": "cpu"}, "timestamp": "now"}
        if status == "PASSED":
            evaluation |= {"correctness": {}, "performance": {"latency_ms": 1.0}}
        workload = {"uuid": uuid, "axes": {}, "inputs": {}}
        return Trace.model_validate({"definition": "add", "workload": workload, "evaluation": evaluation})

    assert held_out_run_passed([], ())
    assert held_out_run_passed([trace("h1", "PASSED"), trace("h2", "PASSED")], ("h1", "h2"))
    assert not held_out_run_passed([trace("h1", "PASSED")], ("h1", "h2"))  # one not run
    assert not held_out_run_passed([trace("h1", "PASSED"), trace("h2", "TIMEOUT")], ("h1", "h2"))
    assert not held_out_run_passed([trace("h9", "PASSED")], ("h1",))  # another version's workload
