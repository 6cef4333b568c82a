"""`solbench eval --cache DIR`: the second evaluation of a solution is read from the cache."""

import json
import subprocess
import sys

import pytest

from conftest import solution_dict

FAST = ["--budget", "0.05", "--rounds", "2", "--device", "cpu"]


def solbench(*args):
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def _cache_records(result):
    assert result.returncode == 0, result.stderr
    return [t["evaluation"]["solbench"]["cache"] for t in json.loads(result.stdout)]


@pytest.mark.slow
def test_a_second_eval_hits_no_cache_measures_again_and_a_changed_source_misses(vector_add_problem, tmp_path):
    solution = tmp_path / "solution.json"
    solution.write_text(json.dumps(solution_dict("import torch\ndef run(x, y):\n    return x + y\n")))
    cache = tmp_path / "cache"
    command = ["eval", vector_add_problem, "--solution", solution, "--json", "--cache", cache, *FAST]

    first = solbench(*command)
    records = _cache_records(first)
    assert [(r["hit"], r["stored"]) for r in records] == [(False, True)] * 2
    assert "cache: miss · measured and stored" in first.stderr

    second = solbench(*command)
    assert [(r["hit"], r["key"]) for r in _cache_records(second)] == [(True, records[0]["key"])] * 2
    assert f"cache: hit {records[0]['key'][:16]}" in second.stderr
    assert [t["evaluation"]["performance"] for t in json.loads(second.stdout)] == [
        t["evaluation"]["performance"] for t in json.loads(first.stdout)
    ]

    entry = cache / records[0]["key"][:2] / f"{records[0]['key']}.json"
    entry.write_text(entry.read_text()[:100])
    damaged = solbench(*command)
    assert [r["hit"] for r in _cache_records(damaged)] == [False, False]
    assert f"warning: {entry}: damaged cache entry" in damaged.stderr

    third = solbench(*command, "--no-cache")
    assert [r["hit"] for r in _cache_records(third)] == [False, False]
    timestamps = [json.loads(r.stdout)[0]["evaluation"]["timestamp"] for r in (first, third)]
    assert timestamps[0] != timestamps[1]

    solution.write_text(json.dumps(solution_dict("import torch\ndef run(x, y):\n    return y + x\n")))
    changed = _cache_records(solbench(*command))
    assert not changed[0]["hit"] and changed[0]["key"] != records[0]["key"]


@pytest.mark.slow
def test_a_cache_path_that_is_a_file_is_one_line_and_exit_2(vector_add_problem, tmp_path):
    (tmp_path / "file").write_text("")
    result = solbench("eval", vector_add_problem, "--reference", "--cache", tmp_path / "file", *FAST)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"solbench: error: {tmp_path / 'file'}: result cache: not a folder"
