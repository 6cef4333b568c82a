"""A suite-run job as a broker message: what it carries, and how a worker finds the problem (no broker needed)."""

import json
from pathlib import Path

import pytest

from conftest import VECTOR_ADD, solution_dict, vector_workloads, write_problem


def _job(tmp_path: Path, solution: str = "reference"):
    from solbench.runner.jobs import Job

    folder = write_problem(tmp_path / "suite" / "L1" / "vector_add", VECTOR_ADD, vector_workloads(64))
    path = None
    if solution != "reference":
        path = folder / f"solution_{solution}.json"
        path.write_text(json.dumps(solution_dict("import torch\n\ndef run(x, y):\n    return x + y\n")))
    return Job(folder, "vector_add", "L1", solution, path)


def test_a_message_is_json_that_gives_back_the_same_job_and_settings(tmp_path):
    from solbench.evaluation import EvaluationConfig
    from solbench.runner.remote_jobs import _CONFIG, RemoteJob, remote_job

    config = EvaluationConfig(device="cpu", rounds=1, data_roots=(tmp_path,))
    message = remote_job(_job(tmp_path, "fast"), config)
    again = RemoteJob.model_validate(json.loads(json.dumps(message.model_dump(mode="json"))))
    assert again == message and again.key == "L1/vector_add/fast"
    assert _CONFIG.validate_python(again.config) == config
    assert json.loads(again.solution_json)["name"] == "candidate"


def test_a_worker_uses_the_runners_folder_only_when_it_holds_the_same_files(tmp_path):
    from solbench.evaluation import EvaluationConfig
    from solbench.runner.remote_jobs import _problem_folder, remote_job

    message = remote_job(_job(tmp_path), EvaluationConfig(device="cpu"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert _problem_folder(message, scratch) == Path(message.problem_dir)  # same machine, same files
    (Path(message.problem_dir) / "workload.jsonl").write_text("")  # the folder here differs from the message
    copy = _problem_folder(message, scratch)
    assert copy.parent == scratch and (copy / "workload.jsonl").read_text() == message.workload_jsonl


def test_a_bad_problem_is_an_error_result_not_a_crash(tmp_path):
    from solbench.evaluation import EvaluationConfig
    from solbench.runner.remote_jobs import evaluate_remote, remote_job

    message = remote_job(_job(tmp_path), EvaluationConfig(device="cpu"))
    broken = message.model_copy(update={"definition_json": '{"name": 1}', "problem_dir": str(tmp_path / "elsewhere")})
    result = evaluate_remote(broken, device="cpu", worker="w@test")
    assert result.error and "definition.json" in result.error and not result.traces_jsonl and result.worker == "w@test"


def test_queues_are_per_kind_and_hardware_and_the_restore_sweep_follows_the_visibility_timeout():
    from solbench.runner.celery_app import BrokerSettings, queue_name

    assert queue_name("solbench.run", "H100_SXM") == "solbench.run.h100_sxm"
    assert BrokerSettings("redis://x").restore_interval_s == 10.0
    assert BrokerSettings("redis://x", visibility_timeout_s=5).restore_interval_s == 1.25


def test_an_alias_names_the_same_queue_as_its_id():
    from solbench.hardware import lookup
    from solbench.runner.celery_app import canonical_hardware

    spec = lookup("H100_SXM")
    assert {canonical_hardware(name) for name in (spec.id, *spec.aliases)} == {spec.id}
    assert canonical_hardware("LOCAL") == "local"


def test_an_unreachable_broker_is_named_at_once():
    from solbench.runner.celery_app import BrokerSettings
    from solbench.runner.celery_pool import workers_serving
    from solbench.runner.errors import BrokerUnreachable

    with pytest.raises(BrokerUnreachable, match=r"--broker redis://127.0.0.1:9/0: cannot reach the broker"):
        workers_serving(BrokerSettings("redis://127.0.0.1:9/0"), "local")
