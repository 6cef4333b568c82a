"""Rankings from queries.py on rows written straight into a database (no evaluation): fast."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from solbench.service import queries
from solbench.service.models import ProblemVersion, Result, ServedProblem, Submission, User

T0 = datetime(2026, 1, 1, 12, 0, 0)


class Board:
    """Writes users, problems and finished submissions with given scores."""

    def __init__(self, factory):
        self.factory = factory
        self.minute = 0

    def problem(self, name: str, set_name: str = "L1") -> None:
        with self.factory.begin() as session:
            problem = ServedProblem(name=name, set_name=set_name)
            session.add(problem)
            session.flush()
            session.add(
                ProblemVersion(
                    problem_id=problem.id,
                    version_hash=name.ljust(64, "0"),
                    definition={},
                    workloads=[{"uuid": "w1"}],
                    held_out=[],
                    source_dir="/nowhere",
                )
            )

    def user(self, name: str, **flags) -> None:
        with self.factory.begin() as session:
            session.add(User(name=name, **flags))

    def result(
        self,
        user: str,
        problem: str,
        score: float | None,
        *,
        mode: str = "ranked",
        status: str = "done",
        deleted: bool = False,
        verdict: str = "PASSED",
        held_out_passed: bool = True,
    ) -> int:
        from sqlalchemy import select

        self.minute += 1
        at = T0 + timedelta(minutes=self.minute)
        with self.factory.begin() as session:
            owner = session.scalar(select(User).where(User.name == user))
            version = session.scalar(select(ProblemVersion).join(ServedProblem).where(ServedProblem.name == problem))
            submission = Submission(
                user_id=owner.id,
                problem_version_id=version.id,
                mode=mode,
                status=status,
                solution={},
                code_hash="0" * 64,
                created_at=at,
                deleted_at=at if deleted else None,
            )
            session.add(submission)
            session.flush()
            if status == "done":
                session.add(
                    Result(
                        submission_id=submission.id,
                        problem_version_id=version.id,
                        score=score,
                        public_score=score,
                        verdict=verdict,
                        held_out_passed=held_out_passed,
                        harness_version="0.1.0+test",
                        hardware="H100_SXM",
                        device="cpu",
                        worker="w",
                        environment={},
                        clock={},
                        traces=[],
                        held_out_traces=[],
                        t_sol_ms={},
                        t_b_ms={},
                        created_at=at,
                    )
                )
            return submission.id


@pytest.fixture
def board(database) -> Board:
    board = Board(database)
    for name in ("add", "mul", "norm"):
        board.problem(name)
    board.problem("gemm", "L2")
    for name in ("ann", "bob", "cat"):
        board.user(name)
    return board


def test_problem_board_takes_each_users_best_and_breaks_ties_by_the_earlier_submission(board):
    board.result("ann", "add", 0.6)
    first_bob = board.result("bob", "add", 0.7)
    board.result("ann", "add", 0.7)  # ties bob, but later: ranks below him
    board.result("bob", "add", 0.5)  # worse: bob keeps 0.7 from his first
    board.result("cat", "add", 0.9, mode="private")  # not ranked: absent
    with board.factory() as session:
        result = queries.problem_leaderboard(session, "add")
    assert [(e.rank, e.user, e.score) for e in result.entries] == [(1, "bob", 0.7), (2, "ann", 0.7)]
    assert result.entries[0].submission_id == first_bob
    assert [(f.user, f.score) for f in result.firsts] == [("ann", 0.6), ("bob", 0.7)]


def test_set_total_is_the_mean_over_the_sets_problems_with_missing_ones_counting_zero(board):
    board.result("ann", "add", 0.9)
    board.result("ann", "mul", 0.6)
    board.result("bob", "add", 0.6)
    board.result("bob", "mul", 0.6)
    board.result("bob", "norm", 0.6)
    board.result("cat", "gemm", 1.0)  # another set
    with board.factory() as session:
        result = queries.set_leaderboard(session, "L1")
        missing = queries.set_leaderboard(session, "nope")
    assert result.problems == ["add", "mul", "norm"]
    assert [(r.user, round(r.total, 6), r.problems_scored) for r in result.rows] == [("bob", 0.6, 3), ("ann", 0.5, 2)]
    assert missing is None
    assert result.missing == "zero" and result.model_dump(mode="json")["missing"] == "zero"  # the board says which rule


def test_banned_users_deleted_unfinished_and_unscored_submissions_leave_the_rankings(board):
    board.result("ann", "add", 0.4)
    board.result("bob", "add", 0.9, deleted=True)
    board.result("bob", "add", None)  # a test-like result without a score
    board.result("cat", "add", 0.8)
    board.result("cat", "mul", 0.0, status="queued")
    with board.factory.begin() as session:
        from sqlalchemy import select

        session.scalar(select(User).where(User.name == "cat")).banned = True
    with board.factory() as session:
        assert [e.user for e in queries.problem_leaderboard(session, "add").entries] == ["ann"]
        assert queries.user_page(session, "cat") is None


def test_user_page_lists_ranks_and_hides_non_ranked_submissions_from_others(board):
    board.result("ann", "add", 0.5)
    board.result("bob", "add", 0.8)
    board.result("ann", "mul", 0.3, mode="private")
    with board.factory() as session:
        from sqlalchemy import select

        ann = session.scalar(select(User).where(User.name == "ann"))
        bob = session.scalar(select(User).where(User.name == "bob"))
        public = queries.user_page(session, "ann", viewer=bob)
        own = queries.user_page(session, "ann", viewer=ann)
    assert [(b.problem, b.rank) for b in public.best] == [("add", 2)]
    assert [(s.set, s.rank, s.users, s.missing) for s in public.sets] == [("L1", 2, 2, "zero")]
    assert [s.mode for s in public.submissions] == ["ranked"]
    assert sorted(s.mode for s in own.submissions) == ["private", "ranked"]


def test_status_counts_the_queue_and_queue_positions_follow_submission_order(board):
    board.result("ann", "add", 0.5)
    first = board.result("ann", "mul", None, status="queued")
    second = board.result("bob", "mul", None, status="queued")
    with board.factory() as session:
        data = queries.status(session)
        positions = [queries.queue_position(session, session.get(Submission, i)) for i in (first, second)]
    assert (data.queue_depth, data.running, data.problems, data.users) == (2, 0, 4, 3)
    assert positions == [1, 2]


def test_problem_list_names_the_best_user(board):
    board.result("ann", "add", 0.5)
    board.result("bob", "add", 0.8)
    with board.factory() as session:
        summaries = {s.name: s for s in queries.list_problems(session)}
    assert (summaries["add"].best_user, summaries["add"].ranked_users) == ("bob", 2)
    assert summaries["gemm"].best_score is None


def test_code_is_visible_to_its_author_and_admins_and_to_everyone_once_the_set_is_frozen(board):
    from datetime import timezone

    submission_id = board.result("ann", "add", 0.6)
    with board.factory() as session:
        submission = session.get(Submission, submission_id)
        assert queries.code_visible(session, submission, "ann", False)
        assert queries.code_visible(session, submission, "bob", True)
        assert not queries.code_visible(session, submission, "bob", False)
        assert not queries.code_visible(session, submission, None, False)
        queries.freeze_set(session, "L2")  # another set: no change
        session.commit()
        assert not queries.code_visible(session, submission, "bob", False)
        queries.freeze_set(session, "L1", datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(days=1))
        session.commit()
        assert not queries.code_visible(session, submission, None, False)  # a freeze date ahead is no freeze yet
        queries.freeze_set(session, "L1")
        session.commit()
        assert queries.code_visible(session, submission, "bob", False)
        assert queries.code_visible(session, submission, None, False)


def test_a_submission_with_a_workload_below_the_speed_of_light_floor_has_no_score_and_is_never_ranked(board):
    """The stricter choice: not ranked at all (rather than ranked with that workload at 0). Its page row shows
    IMPLAUSIBLE with the evidence."""
    from types import SimpleNamespace

    from solbench.service.scoring import score_result
    from solbench.service.web.traces_view import workload_rows
    from solbench.spec.trace import Correctness, Environment, Evaluation, EvaluationDetails, Performance, Trace
    from solbench.spec.workload import Workload

    def trace(uuid: str, latency_ms: float) -> Trace:
        evaluation = Evaluation(
            status="PASSED",
            environment=Environment(hardware="test"),
            timestamp="now",
            correctness=Correctness(),
            performance=Performance(latency_ms=latency_ms),
            solbench=EvaluationDetails(harness_version="test", device="cuda", device_name="x"),
        )
        return Trace(definition="add", workload=Workload(uuid=uuid, axes={}, inputs={}), evaluation=evaluation)

    t_sol, t_b = {"w1": 0.01, "w2": 0.01}, {"w1": 0.04, "w2": 0.04}
    honest = score_result([trace("w1", 0.02), trace("w2", 0.02)], [], t_sol, t_b, "H100_SXM")
    too_fast = score_result([trace("w1", 0.02)], [trace("w2", 0.005)], t_sol, t_b, "H100_SXM")  # held out
    assert honest.score == pytest.approx(0.75) and honest.verdict == "PASSED"
    assert (too_fast.score, too_fast.public_score, too_fast.held_out_score, too_fast.verdict) == (
        None,
        None,
        None,
        "IMPLAUSIBLE",
    )
    board.result("ann", "add", honest.score)
    board.result("bob", "add", too_fast.score)
    with board.factory() as session:
        assert [e.user for e in queries.problem_leaderboard(session, "add").entries] == ["ann"]
    result = SimpleNamespace(t_sol_ms=t_sol, t_b_ms=t_b, hardware="H100_SXM")
    rows = workload_rows(
        result, [trace("w1", 0.02).model_dump(mode="json"), trace("w2", 0.005).model_dump(mode="json")]
    )
    assert [(r.status, r.score) for r in rows] == [("PASSED", pytest.approx(0.75)), ("IMPLAUSIBLE", 0.0)]
    assert "below the speed-of-light floor" in rows[1].failure
