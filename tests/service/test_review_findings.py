"""What the service must not disclose or fail on, from an adversarial review: the result-cache key before the freeze,
row ids beyond 64 bits, source paths spelled to skip the static rules, and runpy running an unchecked file."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

CACHE_KEY = "869b7c8abbd41870e42a24af3a4a8047858bdc919b593941d84e6e6056d08056"


@pytest.fixture(scope="module")
def keyed(in_process_service):
    """The open set's ranked submission with a result-cache record in its first trace, as every served trace has."""
    from solbench.service.models import Result

    app = in_process_service
    with app.service.session_factory.begin() as session:
        result = session.query(Result).filter_by(submission_id=app.sample.open_set_submission).one()
        traces = [dict(t) for t in result.traces]
        evaluation = dict(traces[0]["evaluation"])
        evaluation["solbench"] = dict(evaluation["solbench"], cache={"hit": False, "stored": True, "key": CACHE_KEY})
        traces[0] = dict(traces[0], evaluation=evaluation)
        result.traces = traces
    return app


@pytest.mark.parametrize("reader", ["anonymous", "another user"])
def test_the_result_cache_key_is_hidden_before_the_freeze(keyed, reader):
    """The cache key is a sha256 of the solution's code (result_cache.cache_key): like `code_hash`, which is hidden
    for this reason, it confirms a guessed solution (submit the guess privately, compare your trace's key)."""
    app, sample = keyed, keyed.sample
    token = None if reader == "anonymous" else sample.tokens["carol"]
    response = app.get(f"/api/v1/submissions/{sample.open_set_submission}", token)
    assert response.status_code == 200 and response.json()["code_hash"] is None
    assert CACHE_KEY not in response.text


def test_an_env_id_beyond_64_bits_is_a_404_not_a_500(in_process_service):
    """As GET /submissions/{id} answers for an id no row can have (queries.MAX_ROW_ID)."""
    app = in_process_service
    client = TestClient(app.client.app, raise_server_exceptions=False)
    headers = {"Authorization": f"Bearer {app.sample.tokens['carol']}"}
    for path in ("/api/v1/envs/9223372036854775808", "/api/v1/envs/1/calls/9223372036854775808?wait=0"):
        response = client.get(path, headers=headers)
        assert response.status_code == 404, (path, response.status_code, response.text)


BLOCKED_HELPER = "import gc\nimport random\n\ndef peek():\n    random.seed(0)\n    return len(gc.get_objects())\n"
KERNEL = "import torch\nimport helper\n\ndef run(x, y):\n    helper.peek()\n    return x + y\n"


@pytest.mark.parametrize("path", ["helper.py", "helper.py/", "helper.py/.", "helper.py//", "./helper.py"])
def test_a_source_the_static_rules_block_is_refused_whatever_its_path_spelling(path):
    """`write_sources` writes `directory / path`, and pathlib reads "helper.py/" and "helper.py/." as helper.py:
    the module `import helper` runs. The static rules decide what is code by the path's suffix, so they skipped
    it, and a solution using gc.get_objects and random.seed (both blocked) was accepted, ran and PASSED."""
    from conftest import solution_dict
    from solbench.service.door import Refused, check_static, parse_solution

    data = solution_dict(KERNEL, definition="vector_add")
    data["sources"].append({"path": path, "content": BLOCKED_HELPER})
    with pytest.raises(Refused):
        check_static(parse_solution(data, "vector_add"))


def test_runpy_of_a_source_that_is_not_python_is_refused():
    """The static rules read only .py (and native) sources; `runpy.run_path` runs any file as Python, so a helper.txt
    using gc.get_objects and random.seed (both blocked) was accepted, ran and PASSED, ranked with a normal score."""
    from conftest import solution_dict
    from solbench.service.door import Refused, check_static, parse_solution

    kernel = (
        "import torch\nimport os\nimport runpy\n\n"
        "NS = runpy.run_path(os.path.join(os.path.dirname(__file__), 'helper.txt'))\n\n"
        "def run(x, y):\n    return x + y\n"
    )
    data = solution_dict(kernel)
    data["sources"].append(
        {"path": "helper.txt", "content": "import gc\nimport random\nrandom.seed(0)\nN = len(gc.get_objects())\n"}
    )
    with pytest.raises(Refused, match="runpy"):
        check_static(parse_solution(data, "vector_add"))
