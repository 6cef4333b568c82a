"""Jobs in-process: claims, one result per submission, result reuse, retries, rescoring, bundles."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from conftest import VECTOR_ADD, vector_workloads, write_problem
from service.conftest import HARDWARE, add_solution, fast_settings, settings_model
from solbench.service.catalog import current_version, import_baselines, import_suites
from solbench.service.job_claims import requeue_stale_jobs
from solbench.service.jobs import InfrastructureError, WorkerInfo, _as_json, claim, execute_submission, next_queued
from solbench.service.models import Result, ScoreChange, Submission, User, utcnow
from solbench.service.queries import queue_position
from solbench.spec import Trace

WORKER = WorkerInfo(name="test-worker", hardware=HARDWARE, device="cpu")


@pytest.fixture
def service(tmp_path, database):
    settings = settings_model(fast_settings(tmp_path))
    import_suites(database, settings.suite_folders(), "secret", settings.held_out_per_problem)
    with database.begin() as session:
        session.add(User(name="ann"))
    return settings, database


def _submit(factory, mode: str = "private", source: str | None = None) -> int:
    with factory.begin() as session:
        version = current_version(session, "vector_add")
        submission = Submission(
            user_id=1,
            problem_version_id=version.id,
            mode=mode,
            status="queued",
            solution=add_solution(source) if source else add_solution(),
            code_hash="0" * 64,
        )
        session.add(submission)
        session.flush()
        return submission.id


def _result(factory, submission_id: int) -> Result:
    with factory() as session:
        return session.scalar(select(Result).where(Result.submission_id == submission_id))


@pytest.fixture
def measured(monkeypatch):
    """Evaluations without a sandbox (fast): every workload PASSED against a 2 ms reference, public ones in 1 ms,
    held-out ones in 2 ms. Returns the problems evaluated, in order."""
    import solbench.api
    from solbench.spec.trace import Correctness, Environment, Evaluation, EvaluationStatus, Performance

    evaluated = []

    def evaluate(problem, solution, **options):
        evaluated.append(problem)
        return [
            Trace(
                definition=problem.name,
                solution=solution.name,
                workload=workload,
                evaluation=Evaluation(
                    status=EvaluationStatus.PASSED,
                    environment=Environment(hardware="cpu"),
                    timestamp="now",
                    correctness=Correctness(),
                    performance=Performance(
                        latency_ms=2.0 if workload.uuid.startswith("held-out-") else 1.0, reference_latency_ms=2.0
                    ),
                ),
            )
            for workload in problem.workloads
        ]

    monkeypatch.setattr(solbench.api, "evaluate", evaluate)
    return evaluated


def test_claims_are_exclusive_and_a_stale_claim_is_taken_over(service):
    settings, factory = service
    job = _submit(factory)
    assert claim(factory, job, WORKER, stale_after_s=60, max_attempts=3) is not None
    assert claim(factory, job, WORKER, stale_after_s=60, max_attempts=3) is None
    with factory.begin() as session:
        session.get(Submission, job).heartbeat_at = utcnow() - timedelta(seconds=120)
    assert claim(factory, job, WORKER, stale_after_s=60, max_attempts=3) is not None
    with factory.begin() as session:
        session.get(Submission, job).heartbeat_at = utcnow() - timedelta(seconds=120)
    assert requeue_stale_jobs(factory, stale_after_s=60, max_attempts=3) == 1
    with factory() as session:
        assert (session.get(Submission, job).status, session.get(Submission, job).attempts) == ("queued", 2)


def test_a_submission_that_stops_its_worker_on_every_try_fails_after_max_attempts_with_a_reason(service):
    """Its worker dies mid-evaluation each time, and each redelivery of its message (Celery's, on a lost worker) finds
    it running with a stale heartbeat: it is taken over only while tries are left, then failed for its author."""
    from solbench.service.api.submissions import submission_view

    settings, factory = service
    job = _submit(factory)
    claims = 0
    for _ in range(settings.max_attempts + 2):
        if claim(factory, job, WORKER, stale_after_s=60, max_attempts=settings.max_attempts) is None:
            break
        claims += 1
        with factory.begin() as session:  # the worker died: no heartbeat since
            session.get(Submission, job).heartbeat_at = utcnow() - timedelta(seconds=120)
    assert claims == settings.max_attempts
    assert requeue_stale_jobs(factory, stale_after_s=60, max_attempts=settings.max_attempts) == 1
    with factory() as session:
        view = submission_view(session, session.get(Submission, job))
    assert view.status == "failed" and view.error is not None
    assert view.error.startswith(f"not run again: each of its {settings.max_attempts} tries (at most 3) ended")
    assert view.error.endswith("the last: worker test-worker stopped answering")


def test_a_deleted_submission_is_never_handed_to_a_worker(service):
    """Deleted while queued (cancelled) or while running on a worker that then died (stale, even once the reaper
    queued it again): no worker claims it and it is never next in line, so a deleted solution never runs."""
    settings, factory = service
    queued, running = _submit(factory), _submit(factory)
    assert claim(factory, running, WORKER, stale_after_s=60, max_attempts=3) is not None
    with factory.begin() as session:  # as DELETE /submissions/{id} leaves them, then the running one's worker dies
        session.get(Submission, queued).status = "cancelled"
        for job in (queued, running):
            session.get(Submission, job).deleted_at = utcnow()
        session.get(Submission, running).heartbeat_at = utcnow() - timedelta(seconds=120)
    assert claim(factory, queued, WORKER, stale_after_s=60, max_attempts=3) is None
    assert claim(factory, running, WORKER, stale_after_s=60, max_attempts=3) is None
    assert requeue_stale_jobs(factory, stale_after_s=60, max_attempts=3) == 1
    with factory() as session:
        assert session.get(Submission, running).status == "queued"
    assert next_queued(factory) is None
    assert claim(factory, running, WORKER, stale_after_s=60, max_attempts=3) is None


def test_a_ranked_score_counts_its_held_out_workloads(service, measured, tmp_path):
    """A ranked submission is measured on the held-out workloads too, and its score (when stored and when
    rescored) is the mean over public and held-out ones: a solution tuned to the public shapes alone cannot hide
    a slow held-out one."""
    from solbench.scoring import Baseline, save_baselines
    from solbench.service.rescore import rescore

    settings, factory = service
    job = _submit(factory, mode="ranked")
    execute_submission(factory, job, WORKER, settings=settings)

    def assert_counts_held_out(result: Result) -> None:
        public, held_out = len(result.traces), len(result.held_out_traces)
        assert (public, held_out) == (2, 1) and result.held_out_score is not None
        assert result.held_out_score < result.public_score
        assert result.score == pytest.approx(
            (public * result.public_score + held_out * result.held_out_score) / (public + held_out)
        )

    before = _result(factory, job)
    assert_counts_held_out(before)
    uuids = [t["workload"]["uuid"] for t in before.traces + before.held_out_traces]
    baselines = tmp_path / "baselines.json"
    save_baselines(
        baselines,
        [Baseline(definition="vector_add", workload=w, hardware=HARDWARE, latency_ms=4.0) for w in uuids],
        created="2026-01-01",
        harness_version="test",
    )
    import_baselines(factory, (baselines,))
    assert rescore(factory).rescored == 1
    after = _result(factory, job)
    assert after.score > before.score
    assert_counts_held_out(after)


def test_rescore_reruns_a_result_measured_on_an_old_problem_version_on_the_current_one(service, measured, tmp_path):
    """A changed problem (here: one more workload) is a new version; rescore queues the results measured on the
    old one again, and the re-run measures on the new version."""
    from solbench.service.rescore import rescore

    settings, factory = service
    job = _submit(factory)
    execute_submission(factory, job, WORKER, settings=settings)
    assert rescore(factory).requeued == 0
    write_problem(tmp_path / "suite" / "L1" / "vector_add", VECTOR_ADD, vector_workloads(1000, 4099, 8192))
    assert import_suites(factory, settings.suite_folders(), "secret", settings.held_out_per_problem).new_versions == 1
    report = rescore(factory)
    assert report.requeued_ids == (job,)
    with factory() as session:
        current = current_version(session, "vector_add").id
        assert "problem version" in session.get(Submission, job).rescore_reason
    execute_submission(factory, job, WORKER, settings=settings)
    result = _result(factory, job)
    assert result.problem_version_id == current
    assert [t["workload"]["uuid"] for t in result.traces] == ["n1000", "n4099", "n8192"]


@pytest.mark.slow
def test_a_job_run_twice_leaves_one_result_and_identical_code_reuses_the_cached_result(service):
    settings, factory = service
    first, second = _submit(factory), _submit(factory)
    execute_submission(factory, first, WORKER, settings=settings)
    before = _result(factory, first)
    execute_submission(factory, first, WORKER, settings=settings)  # finished: nothing happens
    execute_submission(factory, second, WORKER, settings=settings)
    with factory() as session:
        assert session.scalar(select(func.count()).select_from(Result)) == 2
        assert session.get(Submission, first).status == "done"
    after, reused = _result(factory, first), _result(factory, second)
    assert after.created_at == before.created_at and after.score == before.score
    assert (before.cache_hit, reused.cache_hit) == (False, True)
    assert reused.traces[0]["evaluation"]["solbench"]["timing"] == before.traces[0]["evaluation"]["solbench"]["timing"]
    assert before.verdict == "PASSED" and before.score is not None and before.clock

    # another author's identical code is measured anew: a hit would confirm a guess of someone's hidden code
    with factory.begin() as session:
        session.add(User(name="bob"))
    guess = _submit(factory)
    with factory.begin() as session:
        session.get(Submission, guess).user_id = 2
    execute_submission(factory, guess, WORKER, settings=settings)
    assert _result(factory, guess).cache_hit is False


@pytest.mark.slow
def test_an_infrastructure_failure_is_retried_a_bounded_number_of_times_then_fails(service):
    settings, factory = service
    settings = settings.model_copy(update={"max_attempts": 2})
    job = _submit(factory, mode="test")
    broken = WorkerInfo(name="broken", hardware=HARDWARE, device="cuda:7")  # no such device here
    with pytest.raises(InfrastructureError):
        execute_submission(factory, job, broken, settings=settings)
    with factory() as session:
        assert (session.get(Submission, job).status, session.get(Submission, job).attempts) == ("queued", 1)
    with pytest.raises(InfrastructureError):
        execute_submission(factory, job, broken, settings=settings)
    with factory() as session:
        submission = session.get(Submission, job)
        assert submission.status == "failed" and "cuda" in submission.error
    assert _result(factory, job) is None


@pytest.mark.slow
def test_a_solutions_own_failure_is_a_result_not_a_retry(service):
    settings, factory = service
    job = _submit(factory, source="def run(x, y):\n    return (x + y) / 0.0\n")
    execute_submission(factory, job, WORKER, settings=settings)
    result = _result(factory, job)
    assert result.verdict == "INCORRECT_NUMERICAL" and result.score == 0.0
    json.dumps(result.traces, allow_nan=False)  # strict JSON (PostgreSQL's JSON type, the API's responses)
    trace = Trace.model_validate(result.traces[0])
    infinite = trace.model_copy(
        update={
            "evaluation": trace.evaluation.model_copy(
                update={
                    "correctness": trace.evaluation.correctness.model_copy(update={"max_relative_error": float("inf")})
                }
            )
        }
    )
    stored = _as_json(infinite)
    assert '"Infinity"' in json.dumps(stored, allow_nan=False)
    assert Trace.model_validate(stored).evaluation.correctness.max_relative_error == float("inf")
    with factory() as session:
        assert session.get(Submission, job).attempts == 1


@pytest.mark.slow
def test_rescore_re_scores_without_running_when_only_t_b_changed_and_requeues_other_harnesses(service, tmp_path):
    from solbench.scoring import Baseline, save_baselines
    from solbench.service.rescore import rescore

    settings, factory = service
    job = _submit(factory)
    execute_submission(factory, job, WORKER, settings=settings)
    before = _result(factory, job)
    assert rescore(factory).rescored == 0  # nothing moved

    baselines = tmp_path / "baselines.json"
    save_baselines(
        baselines,
        [Baseline(definition="vector_add", workload=w, hardware=HARDWARE, latency_ms=50.0) for w in ("n1000", "n4099")],
        created="2026-01-01",
        harness_version="test",
    )
    import_baselines(factory, (baselines,))
    report = rescore(factory)
    assert (report.rescored, report.requeued) == (1, 0)
    after = _result(factory, job)
    assert after.traces == before.traces and after.score > before.score and after.t_b_ms["n1000"] == 50.0
    with factory() as session:
        change = session.scalar(select(ScoreChange))
        assert "T_b changed" in change.reason and session.get(Submission, job).status == "done"

    with factory.begin() as session:  # as if measured by an older harness release
        session.scalar(select(Result)).harness_version = "0.0.9+old"
    assert rescore(factory, since_version="0.1.0").selected == 0
    assert rescore(factory, since_version="0.0.1").requeued == 1
    execute_submission(factory, job, WORKER, settings=settings)
    with factory() as session:
        assert session.scalar(select(func.count()).select_from(Result)) == 1
        assert session.scalar(select(ScoreChange).order_by(ScoreChange.id.desc())).reason == "re-evaluated"
        assert session.get(Submission, job).status == "done"


@pytest.mark.slow
def test_a_bundle_replays_locally_with_the_same_statuses(service, tmp_path, fast_config):
    from solbench.service.bundle import make_bundle, replay_bundle

    settings, factory = service
    job = _submit(factory)
    execute_submission(factory, job, WORKER, settings=settings)
    with factory() as session:
        submission = session.get(Submission, job)
        bundle = make_bundle(submission, submission.result, submission.problem_version)
    path = tmp_path / "submission.bundle.json"
    path.write_text(json.dumps(bundle, default=str))
    report = replay_bundle(path, config=fast_config)
    assert [row.workload for row in report.rows] == ["n1000", "n4099"]
    assert report.same_statuses and all(row.ratio and row.ratio > 0 for row in report.rows)
    assert report.original_hardware == HARDWARE
    # the same through the CLI: `solbench replay BUNDLE` (what a user downloading a bundle types)
    from typer.testing import CliRunner

    from solbench.cli.app import app

    replayed = CliRunner().invoke(app, ["replay", str(path), "--json"])
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.stdout)["agrees"] is True
    refused = CliRunner().invoke(app, ["replay", str(path), "--best"])  # main() makes this one line and exit 2
    assert "a bundle holds one submission" in str(refused.exception), refused.output


@pytest.mark.slow
def test_deleting_a_running_submission_stops_its_evaluation(service):
    """The heartbeat sees the deletion; the evaluation stops before its next workload, stores nothing, and the
    submission ends cancelled instead of running to the end."""
    import threading
    import time

    settings, factory = service
    settings = settings.model_copy(update={"heartbeat_s": 0.2})
    slow = "import time, torch\n\ndef run(x, y):\n    time.sleep(0.05)\n    return x + y\n"
    job = _submit(factory, source=slow)
    worker = threading.Thread(target=execute_submission, args=(factory, job, WORKER), kwargs={"settings": settings})
    started = time.monotonic()
    worker.start()
    while time.monotonic() - started < 60:
        with factory() as session:
            if session.get(Submission, job).status == "running":
                session.get(Submission, job).deleted_at = utcnow()
                session.commit()
                break
        time.sleep(0.05)
    deleted = time.monotonic()
    worker.join(timeout=120)
    assert not worker.is_alive()
    with factory() as session:
        assert session.get(Submission, job).status == "cancelled"
    assert _result(factory, job) is None
    # Run to its end, the evaluation would have stored its traces in the result cache; stopped, it stored none.
    assert sorted(p.name for p in settings.cache_dir.rglob("*") if p.is_file()) == []
    print(f"stopped {time.monotonic() - deleted:.1f} s after the deletion")


def test_authors_take_turns_in_the_queue(service):
    """One author's many waiting submissions, or one whose job runs long, do not hold the workers while another
    author's first one waits: a submission's turn is its place among its author's running and queued ones."""
    _, factory = service
    with factory.begin() as session:
        session.add(User(name="bob"))
    ann = [_submit(factory) for _ in range(3)]
    bob = _submit(factory)
    with factory.begin() as session:
        session.get(Submission, bob).user_id = 2
    assert next_queued(factory) == ann[0]  # first turns: the oldest
    assert claim(factory, ann[0], WORKER, stale_after_s=60, max_attempts=3)
    assert next_queued(factory) == bob  # ann's next is her second turn, bob's is his first
    with factory() as session:  # the positions the API reports follow the same order
        positions = [queue_position(session, session.get(Submission, i)) for i in (bob, ann[1], ann[2], ann[0])]
    assert positions == [1, 2, 3, 0]
    assert claim(factory, bob, WORKER, stale_after_s=60, max_attempts=3)
    assert next_queued(factory) == ann[1]  # second turns: ann's second, bob has none


def test_a_stored_solution_a_newer_rule_refuses_fails_at_once_with_the_reason(service):
    """A solution accepted before a rule of the solution format was added (a path spelled `./kernel.py`) cannot run:
    the submission fails at its first try, saying why, rather than being retried as the service's own failure."""
    settings, factory = service
    submission_id = _submit(factory)
    with factory.begin() as session:
        submission = session.get(Submission, submission_id)
        solution = dict(submission.solution)
        solution["sources"] = [{**solution["sources"][0], "path": "./" + solution["sources"][0]["path"]}]
        solution["spec"] = {**solution["spec"], "entry_point": "./" + solution["spec"]["entry_point"]}
        submission.solution = solution
    execute_submission(factory, submission_id, WORKER, settings=settings)
    with factory() as session:
        submission = session.get(Submission, submission_id)
        assert submission.status == "failed" and submission.attempts == 1, (submission.status, submission.attempts)
        assert "no longer passes the solution format's checks" in submission.error and "plainly" in submission.error
