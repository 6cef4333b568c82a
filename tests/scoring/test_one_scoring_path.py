"""`solbench score`, `solbench run`'s summary and `score_traces` give the same numbers on the same traces.

Random trace sets (statuses, latencies, T_SOL present, absent or for other hardware, baselines from
a file or from the reference timed in the same run, several problems, solutions and sets) go through
all three; then a hand-worked case pins the unscored policy.
"""

import json
import random
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from conftest import VECTOR_ADD, vector_workloads, write_problem
from solbench.cli.app import app
from solbench.runner.jobs import plan_jobs
from solbench.runner.store import TraceStore
from solbench.runner.summary import summarize
from solbench.scoring import Baseline, Baselines, save_baselines, score_traces
from solbench.spec.problem import load_problem
from solbench.spec.problem_set import problem_set
from solbench.spec.trace import (
    Correctness,
    Environment,
    Evaluation,
    EvaluationDetails,
    EvaluationStatus,
    Performance,
    SolRecord,
    Trace,
)
from solbench.spec.workload import Workload

HARDWARE = "H200"
CASES = 300
# IMPLAUSIBLE carries its evidence (correctness, performance): the random PASSED traces measured below the
# speed-of-light floor of their T_SOL become it, in every path alike.
FAILURES = [s for s in EvaluationStatus if s not in (EvaluationStatus.PASSED, EvaluationStatus.IMPLAUSIBLE)]
# (folder under the suite, set tag or None): the set comes from the tag, else the folder, else "all".
PROBLEMS = {
    "p_tagged": ("L1/p_tagged", "L1"),
    "p_folder": ("L2/p_folder", None),
    "p_root": ("p_root", None),
    "p_tag_wins": ("misc/p_tag_wins", "Quant"),
    "p_second": ("L1/p_second", "L1"),
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Problem folders whose one workload no random trace uses, so `solbench score` never analyses them: T_SOL
    is exactly what the traces carry, as in a run's summary."""
    root = tmp_path_factory.mktemp("suite")
    for name, (folder, tag) in PROBLEMS.items():
        definition = {**VECTOR_ADD, "name": name, "tags": [f"set:{tag}"] if tag else []}
        write_problem(root / folder, definition, [{**vector_workloads(8)[0], "uuid": f"{name}-unused"}])
    return root


def _trace(
    definition: str,
    solution: str,
    workload: str,
    status: EvaluationStatus,
    latency_ms: float | None = None,
    reference_ms: float = 0.0,
    sol: SolRecord | None = None,
) -> Trace:
    passed = status is EvaluationStatus.PASSED
    evaluation = Evaluation(
        status=status,
        environment=Environment(hardware="test"),
        timestamp="now",
        correctness=Correctness()
        if status in (EvaluationStatus.PASSED, EvaluationStatus.INCORRECT_NUMERICAL)
        else None,
        performance=Performance(latency_ms=latency_ms, reference_latency_ms=reference_ms) if passed else None,
        solbench=EvaluationDetails(harness_version="test", device="cpu", device_name="test", sol=sol),
    )
    return Trace(
        definition=definition,
        solution=solution,
        evaluation=evaluation,
        workload=Workload(uuid=workload, axes={"N": 8}, inputs={}),
    )


def _random_case(rng: random.Random) -> tuple[dict[tuple[str, str], list[Trace]], list[Baseline]]:
    """Traces per (problem, solution) and baselines for some of their workloads."""
    files: dict[tuple[str, str], list[Trace]] = {}
    baselines = []
    solutions = ["cand", "other"][: rng.randint(1, 2)]
    for name in rng.sample(sorted(PROBLEMS), rng.randint(1, len(PROBLEMS))):
        for solution in solutions:
            traces = []
            for index in range(rng.randint(1, 4)):
                workload = f"{name}-w{index}"
                if rng.random() < 0.35:
                    traces.append(_trace(name, solution, workload, rng.choice(FAILURES)))
                    continue
                latency = (
                    rng.choice([0.0, rng.lognormvariate(0, 1)]) if rng.random() < 0.05 else rng.lognormvariate(0, 1)
                )
                reference = rng.lognormvariate(0, 1) if rng.random() < 0.8 else 0.0
                sol = None
                if rng.random() < 0.7:
                    sol = SolRecord(
                        hardware=rng.choice([HARDWARE, HARDWARE.lower(), "B200"]),
                        t_sol_ms=rng.uniform(0.01, 1.5),
                        bound="memory",
                        coverage_full=True,
                    )
                traces.append(_trace(name, solution, workload, EvaluationStatus.PASSED, latency, reference, sol))
                if rng.random() < 0.3:
                    baselines.append(
                        Baseline(
                            definition=name,
                            workload=workload,
                            hardware=HARDWARE,
                            latency_ms=rng.lognormvariate(0, 1),
                            source="file",
                        )
                    )
            files[(name, solution)] = traces
    return files, baselines


def _numbers(problems, sets):
    """(set, problem, solution) -> (score, latency) and set -> (score, problems, workloads passed)."""
    return (
        {
            (p[0], p[1], p[2]): (
                pytest.approx(p[3]) if p[3] is not None else None,
                pytest.approx(p[4]) if p[4] is not None else None,
            )
            for p in problems
        },
        {s[0]: (pytest.approx(s[1]) if s[1] is not None else None, s[2], s[3]) for s in sets},
    )


@pytest.mark.slow  # 300 cases, about 7 s
def test_score_run_summary_and_library_agree_on_random_traces(suite, tmp_path):
    rng = random.Random(20261201)
    planned = plan_jobs(suite, solutions=["reference"])[0]  # the run's set rule decides the trace folders
    jobs = {(job.name, solution): replace(job, solution=solution) for job in planned for solution in ("cand", "other")}
    folder_of = {job.name: job.problem_dir for job in jobs.values()}
    sets = {
        name: problem_set(load_problem(folder).definition.tags, folder, suite) for name, folder in folder_of.items()
    }
    assert sets == {"p_tagged": "L1", "p_folder": "L2", "p_root": "all", "p_tag_wins": "Quant", "p_second": "L1"}
    runner = CliRunner()
    unscored_seen = 0
    for case in range(CASES):
        files, baselines = _random_case(rng)
        out = tmp_path / f"run{case}"
        for key, traces in files.items():
            TraceStore(out).write(jobs[key], traces)
        traces_file = out / "all.jsonl"
        traces_file.write_text("".join(t.model_dump_json() + "\n" for traces in files.values() for t in traces))
        baselines_file = out / "baselines.json"
        save_baselines(baselines_file, baselines, "now", "test")

        library = score_traces(
            [t for traces in files.values() for t in traces], HARDWARE, baselines=Baselines(baselines), sets=sets
        )
        summary = summarize(out, HARDWARE, Baselines(baselines))
        result = runner.invoke(
            app,
            [
                "score",
                str(traces_file),
                "-H",
                HARDWARE,
                "--baselines",
                str(baselines_file),
                "--problems",
                str(suite),
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        command = json.loads(result.stdout)

        expected = _numbers(
            [(p.set, p.definition, p.solution, p.score, p.latency_ms) for p in library.problems],
            [(s.set, s.score, s.problems, s.workloads_passed) for s in library.sets],
        )
        from_summary = _numbers(
            [(p.set, p.problem, p.solution, p.result.score, p.result.latency_ms) for p in summary.problems],
            [(s.set, s.score, s.problems, s.workloads_passed) for s in summary.sets],
        )
        from_command = _numbers(
            [(p["set"], p["definition"], p["solution"], p["score"], p["latency_ms"]) for p in command["problems"]],
            [(s["set"], s["score"], s["problems"], s["workloads_passed"]) for s in command["sets"]],
        )
        assert from_summary == expected, f"case {case}"
        assert (summary.report.problems, summary.report.sets) == (library.problems, library.sets)  # the same report
        assert from_command == expected, f"case {case}"
        assert command["unscored_policy"] == summary.unscored_policy == library.unscored_policy == "exclude"
        unscored_seen += sum(p.unscored for p in library.problems)
    assert unscored_seen > 0  # the random cases did exercise the policy


def test_hand_worked_unscored_workload_is_left_out(suite, tmp_path):
    """S = 0.75 on one workload, a second PASSED without T_SOL: the problem scores 0.75 (not 0.375), in every path.

    T_b = 2, T_SOL = 1, T_k = 4/3: S = (2 - 1) / ((4/3 - 1) + (2 - 1)) = 1 / (4/3) = 0.75.
    """
    sol = SolRecord(hardware=HARDWARE, t_sol_ms=1.0, bound="memory", coverage_full=True)
    traces = [
        _trace("p_tagged", "cand", "w0", EvaluationStatus.PASSED, 4 / 3, 2.0, sol),
        _trace("p_tagged", "cand", "w1", EvaluationStatus.PASSED, 1.0, 2.0, None),
    ]
    library = score_traces(traces, HARDWARE)
    [problem] = library.problems
    assert [w.score for w in library.workloads] == [pytest.approx(0.75), None]
    assert library.workloads[1].note == "unscored: no T_SOL"
    assert (problem.score, problem.scored, problem.unscored) == (pytest.approx(0.75), 1, 1)
    assert problem.latency_ms == pytest.approx((4 / 3) ** 0.5)

    out = tmp_path / "run"
    [job] = plan_jobs(suite, solutions=["reference"], names=["p_tagged"])[0]
    TraceStore(out).write(replace(job, solution="cand"), traces)
    summary = summarize(out, HARDWARE)
    assert summary.problems[0].result.score == pytest.approx(0.75) and summary.sets[0].score == pytest.approx(0.75)
    written = json.loads(json.dumps(summary.as_json()))
    assert written["unscored_policy"] == "exclude" and written["sets"][0]["missing"] == "exclude"
    assert written["problems"] == [
        {
            "set": "L1",
            "problem": "p_tagged",
            "solution": "cand",
            "workloads": 2,
            "passed": 2,
            "scored": 1,
            "unscored": 1,
            "score": pytest.approx(0.75),
            "latency_ms": pytest.approx((4 / 3) ** 0.5),
            "statuses": {"PASSED": 2},
        }
    ]

    traces_file = tmp_path / "traces.jsonl"
    traces_file.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    result = CliRunner().invoke(app, ["score", str(traces_file), "-H", HARDWARE, "--json"])
    command = json.loads(result.stdout)
    assert command["problems"][0]["score"] == pytest.approx(0.75)
    assert command["sets"] == [
        {
            "set": "all",
            "problems": 1,
            "problems_passed": 1,
            "workloads": 2,
            "workloads_passed": 2,
            "scored_problems": 1,
            "score": pytest.approx(0.75),
            "missing": "exclude",
        }
    ]
    assert command["workloads"][1]["note"] == "unscored: no T_SOL" and command["unscored_policy"] == "exclude"

    failed = [traces[0], _trace("p_tagged", "cand", "w1", EvaluationStatus.RUNTIME_ERROR)]
    assert score_traces(failed, HARDWARE).problems[0].score == pytest.approx(0.375)  # a failure counts 0


def test_without_hardware_the_summary_counts_but_scores_nothing():
    from solbench.runner.summary import summarize_traces

    traces = [
        _trace("p_root", "cand", "w0", EvaluationStatus.PASSED, 1.0, 2.0),
        _trace("p_root", "cand", "w1", EvaluationStatus.TIMEOUT),
    ]
    summary = summarize_traces([("all", "p_root", "cand", traces)], None)
    [entry], [set_summary] = summary.problems, summary.sets
    problem = entry.result
    assert (problem.workloads, problem.passed, problem.statuses) == (2, 1, {"PASSED": 1, "TIMEOUT": 1})
    assert problem.score is None and set_summary.score is None and set_summary.workloads_passed == 1
    assert json.loads(json.dumps(summary.as_json()))["problems"][0]["unscored"] == 2
