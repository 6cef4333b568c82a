"""`solbench suite import`: SOL-ExecBench's data set (problem folders, or parquet files the tests build from
them) becomes problem folders solbench loads, with the published figures as a baselines file and a report
of what upstream's schema ignores."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SHARED, VECTOR_ADD, vector_workloads, write_problem
from solbench.scoring.baselines import load_baselines
from solbench.spec.problem import find_problem_folders, load_problem
from solbench.suite.importer import ImportSourceError, import_benchmark
from solbench.suite.importer.sources import COLUMNS

SAMPLE = SHARED / "sol-execbench-sample"
needs_sample = pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"{SAMPLE} is absent")
SETS = {"L1": "L1", "L2": "L2", "Quant": "Quant", "FlashInfer-Bench": "FIB"}


def _row(folder: Path) -> dict:
    """The parquet row SOL-ExecBench's data set holds for a problem folder (JSON columns as text)."""
    definition = json.loads((folder / "definition.json").read_text())
    workloads = [json.loads(line) for line in (folder / "workload.jsonl").read_text().splitlines() if line.strip()]
    return {
        "name": definition["name"],
        "description": definition.get("description"),
        "hf_id": definition.get("hf_id") or "",
        "axes": json.dumps(definition["axes"]),
        "inputs": json.dumps(definition["inputs"]),
        "outputs": json.dumps(definition["outputs"]),
        "reference": definition["reference"],
        "workloads": json.dumps(workloads),
        "custom_inputs_entrypoint": definition.get("custom_inputs_entrypoint"),
    }


def _write_parquet(path: Path, rows: list[dict]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    columns = {c: [r.get(c) for r in rows] for c in COLUMNS}
    pq.write_table(pa.table({c: pa.array(v, type=pa.string()) for c, v in columns.items()}), path)
    return path


@pytest.fixture(scope="module")
def sample_parquet(tmp_path_factory) -> Path:
    """The 20 sample problems as the data set's four parquet files under data/."""
    root = tmp_path_factory.mktemp("dataset")
    for subset in SETS:
        _write_parquet(
            root / "data" / f"{subset}.parquet", [_row(folder) for folder in sorted((SAMPLE / subset).iterdir())]
        )
    return root


@pytest.fixture(scope="module")
def from_folders(tmp_path_factory):
    output = tmp_path_factory.mktemp("imported")
    return import_benchmark(SAMPLE, output, cpu_tier=False), output


@needs_sample
def test_every_sample_problem_imports_from_folders_and_loads(from_folders):
    report, output = from_folders
    assert report.problems == report.loaded == 20 and report.workloads == 354
    assert {(s.set, s.subset): s.problems for s in report.sets} == {
        ("L1", "L1"): 7,
        ("L2", "L2"): 5,
        ("Quant", "Quant"): 4,
        ("FIB", "FlashInfer-Bench"): 4,
    }
    for subset, set_ in SETS.items():
        for source in sorted((SAMPLE / subset).iterdir()):
            folder = output / set_ / source.name  # the upstream index stays in the folder name
            problem = load_problem(folder)
            assert "origin:sol-execbench" in problem.definition.tags and problem.definition.tag("set") == set_
            assert (folder / "workload.jsonl").read_text() == (source / "workload.jsonl").read_text()
            assert (folder / "metadata.json").read_text() == (source / "metadata.json").read_text()
            upstream = json.loads((source / "definition.json").read_text())
            written = json.loads((folder / "definition.json").read_text())
            assert {k: v for k, v in written.items() if k != "tags"} == upstream  # upstream's fields, unchanged
    assert len(find_problem_folders(output)) == 20
    saved = json.loads((output / "import-report.json").read_text())
    assert saved["loaded"] == 20 and saved["kinds"] == report.kinds()


@needs_sample
def test_published_figures_become_a_baselines_file(from_folders):
    report, output = from_folders
    baselines = load_baselines(output / "baselines.json")
    assert len(baselines) == 354 and report.baselines_file == str(output / "baselines.json")
    metadata = json.loads((SAMPLE / "L1/006_hyena_depthwise_conv1d_split_gate/metadata.json").read_text())
    problem = load_problem(output / "L1/006_hyena_depthwise_conv1d_split_gate")
    entry = baselines.get(problem.name, problem.workloads[3].uuid, "b200_1500mhz")
    figures = metadata["sol"]["per_workload"][3]
    assert (entry.latency_ms, entry.sol_ms) == (figures["baseline_latency_ms"], figures["sol_ms"])
    assert entry.source == f"published: SOL-ExecBench {metadata['source']['resolved_sha']}"
    from solbench.sol.published import PUBLISHED_HARDWARE
    from solbench.suite.importer.published import PUBLISHED_HARDWARE as WRITTEN

    assert WRITTEN == PUBLISHED_HARDWARE  # the importer's copy (it may not import sol: torch) is the same id


@needs_sample
def test_what_upstream_ignores_is_reported_with_file_line_and_field(from_folders):
    report, output = from_folders
    ignored = [n for n in report.notes_of("ignored-field") if n.problem == "L2/002_decoder_layer_full_block"]
    assert [(n.field, n.lines) for n in ignored] == [("tolerance.required_match_ratio", list(range(1, 19)))]
    assert ignored[0].file == str(output / "L2/002_decoder_layer_full_block/workload.jsonl")
    problem = load_problem(output / "L2/002_decoder_layer_full_block")
    assert all(w.effective_tolerance.required_matched_ratio == 0.99 for w in problem.workloads)  # as upstream
    missing = {(n.problem, n.field) for n in report.notes_of("missing-data")}
    assert ("FIB/018_mla_paged_decode_h16_ckv512_kpe64_ps1", "inputs.kv_indices.path") in missing
    assert {p for p, _ in missing} == {
        "FIB/018_mla_paged_decode_h16_ckv512_kpe64_ps1",
        "FIB/020_moe_fp8_block_scale_ds_routing_topk8_ng8_kg4_e32_h7168_i2048",
    }


@needs_sample
def test_parquet_import_writes_what_the_folder_import_writes(sample_parquet, from_folders, tmp_path):
    _, folders = from_folders
    report = import_benchmark(sample_parquet, tmp_path, cpu_tier=False)
    assert report.problems == report.loaded == 20 and report.workloads == 354
    assert report.baselines_file is None  # the parquet files carry no published figures
    for folder in find_problem_folders(folders):
        twin = tmp_path / folder.relative_to(folders)
        assert json.loads((twin / "definition.json").read_text()) == json.loads(
            (folder / "definition.json").read_text()
        )
        assert [json.loads(x) for x in (twin / "workload.jsonl").read_text().splitlines()] == [
            json.loads(x) for x in (folder / "workload.jsonl").read_text().splitlines()
        ]
    single = import_benchmark(sample_parquet / "data" / "Quant.parquet", tmp_path / "one", cpu_tier=False)
    assert [(s.set, s.problems) for s in single.sets] == [("Quant", 4)]


def _upstream_problem(root: Path, workloads: list[dict]) -> Path:
    return write_problem(root / "L1" / "001_vector_add", {**VECTOR_ADD, "name": "001_vector_add"}, workloads)


def test_workloads_upstream_accepts_import_with_notes_naming_file_line_and_field(tmp_path):
    workloads = vector_workloads(8, 16, 32)
    workloads[1]["axes"]["M"] = 4  # an axis the definition does not declare
    workloads[2]["inputs"]["bias"] = {"type": "random"}  # an input it does not have
    workloads[2]["tolerance"] = {"max_atol": 0.1, "required_match_ratio": 0.5}
    _upstream_problem(tmp_path / "src", workloads)
    report = import_benchmark(tmp_path / "src", tmp_path / "out", cpu_tier=False)
    assert report.loaded == 1 and set(report.kinds()) == {"unknown-axis", "unknown-input", "ignored-field"}
    axis = report.notes_of("unknown-axis")[0]
    assert (axis.problem, axis.lines, axis.field) == ("L1/001_vector_add", [2], "axes.M")
    assert axis.file == str(tmp_path / "out/L1/001_vector_add/workload.jsonl")


def test_published_figures_that_do_not_pair_with_the_workloads_are_reported(tmp_path):
    folder = _upstream_problem(tmp_path / "src", vector_workloads(8, 16))
    (folder / "metadata.json").write_text(
        json.dumps(
            {
                "subset": "L1",
                "collection_index": 1,
                "sol": {
                    "available": True,
                    "per_workload": [{"axes": {"N": 8}, "sol_ms": 0.001, "baseline_latency_ms": 0.01}],
                },
            }
        )
    )
    report = import_benchmark(tmp_path / "src", tmp_path / "out", cpu_tier=False)
    assert report.baselines_file is None
    assert [n.message.split(";")[0] for n in report.notes_of("published-figures")] == [
        "sol.per_workload: 1 figures for 2 workloads"
    ]


PAIRED = [
    {"axes": {"N": 8}, "sol_ms": 0.001, "baseline_latency_ms": 0.01},
    {"axes": {"N": 16}, "sol_ms": 0.002, "baseline_latency_ms": 0.02},
]


@pytest.mark.parametrize(
    "figures, why_not",
    [
        ({"per_workload": PAIRED}, None),
        (
            {"per_workload": [PAIRED[0], {**PAIRED[1], "axes": {"N": 32}}]},
            "sol.per_workload[1].axes.N: 32 where workload line 2 has 16",
        ),
        ({"sol_is_dummy": True, "per_workload": PAIRED}, "sol.sol_is_dummy: the published figures are placeholders"),
    ],
    ids=["paired", "other-axes", "dummy"],
)
def test_published_figures_for_other_axes_or_marked_dummy_are_not_used(tmp_path, figures, why_not):
    """A published T_SOL/T_b is a figure for one workload's shape: paired with a workload of other axes, or
    taken from placeholders (`sol_is_dummy`), it would score every solution against a wrong bound, so none is used."""
    folder = _upstream_problem(tmp_path / "src", vector_workloads(8, 16))
    (folder / "metadata.json").write_text(
        json.dumps({"subset": "L1", "collection_index": 1, "sol": {"available": True, **figures}})
    )
    report = import_benchmark(tmp_path / "src", tmp_path / "out", cpu_tier=False)
    notes = [n.message.split(";")[0] for n in report.notes_of("published-figures")]
    if why_not is None:
        paired = load_baselines(report.baselines_file)
        assert notes == [] and [(b.workload, b.sol_ms) for b in paired.entries()] == [("n8", 0.001), ("n16", 0.002)]
    else:
        assert report.baselines_file is None and notes == [why_not]


def test_unreadable_sources_name_the_file_and_the_field(tmp_path):
    with pytest.raises(ImportSourceError, match="no such file or folder"):
        import_benchmark(tmp_path / "nowhere", tmp_path / "out", cpu_tier=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportSourceError, match="no parquet files .* and no problem folders"):
        import_benchmark(tmp_path / "empty", tmp_path / "out", cpu_tier=False)
    row = {"name": "001_x", "axes": "{}", "inputs": "{}", "outputs": "{}", "reference": "", "workloads": "[{"}
    bad = _write_parquet(tmp_path / "data" / "L1.parquet", [row])
    with pytest.raises(ImportSourceError, match=r"L1.parquet row 0: workloads: invalid JSON"):
        import_benchmark(bad, tmp_path / "out", cpu_tier=False)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"name": ["x"]}), tmp_path / "L2.parquet")
    with pytest.raises(ImportSourceError, match=r"L2.parquet: column 'description' missing"):
        import_benchmark(tmp_path / "L2.parquet", tmp_path / "out", cpu_tier=False)
    folder = tmp_path / "folders" / "L1" / "001_x"
    folder.mkdir(parents=True)
    (folder / "definition.json").write_bytes(b"\xff\xfe")
    (folder / "workload.jsonl").write_text("")
    with pytest.raises(ImportSourceError, match=r"001_x/definition.json: not UTF-8 text"):
        import_benchmark(tmp_path / "folders", tmp_path / "out", cpu_tier=False)


def test_a_problem_solbench_refuses_is_a_load_error_and_the_others_import(tmp_path):
    _upstream_problem(tmp_path / "src", vector_workloads(8))
    broken = write_problem(
        tmp_path / "src" / "L1" / "002_broken",
        {**VECTOR_ADD, "name": "002_broken"},
        [{"uuid": "a", "axes": {}, "inputs": {}}],
    )
    report = import_benchmark(tmp_path / "src", tmp_path / "out", cpu_tier=False)
    assert (report.problems, report.loaded) == (2, 1)
    error = report.notes_of("load-error")[0]
    assert error.problem == "L1/002_broken" and error.lines == [1] and "missing value for var axis" in error.message
    assert error.source == str(broken)


def _solbench(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.slow  # two processes (about 3 s each)
def test_cli_import_prints_the_report_and_fetch_without_network_says_what_to_do(tmp_path):
    _upstream_problem(tmp_path / "src", vector_workloads(8))
    imported = _solbench("suite", "import", tmp_path / "src", "-o", tmp_path / "out", "--no-cpu-tier")
    assert imported.returncode == 0, imported.stderr
    assert "imported 1 problems (1 workloads)" in imported.stdout and (tmp_path / "out/import-report.json").is_file()
    started = time.monotonic()
    fetched = _solbench(
        "suite",
        "fetch",
        "sol-execbench",
        "-o",
        tmp_path / "fetched",
        "--network-timeout",
        "2",
        env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path / "hf"), "HF_HUB_DISABLE_TELEMETRY": "1"},
    )
    assert fetched.returncode == 2 and len(fetched.stderr.strip().splitlines()) == 1, fetched.stderr
    assert "cannot download nvidia/SOL-ExecBench from http://127.0.0.1:9" in fetched.stderr
    assert "solbench suite import SOL-ExecBench -o" in fetched.stderr
    assert time.monotonic() - started < 60 and not (tmp_path / "fetched").exists()


@pytest.mark.slow  # analyses a problem in a process (about 3 s)
def test_sol_prints_the_published_figure_from_a_baselines_file(tmp_path):
    folder = write_problem(tmp_path / "vector_add", VECTOR_ADD, vector_workloads(1000, 4099))
    baselines = tmp_path / "baselines.json"
    baselines.write_text(
        json.dumps(
            {
                "version": 1,
                "baselines": [
                    {
                        "definition": "vector_add",
                        "workload": "n1000",
                        "hardware": "H200",
                        "latency_ms": 1.0,
                        "sol_ms": 0.001,
                    }
                ],
            }
        )
    )
    result = _solbench("sol", folder, "-H", "H200", "--json", "--baselines", baselines)
    assert result.returncode == 0, result.stderr
    rows = {row["workload"]["uuid"]: row for row in json.loads(result.stdout)}
    assert rows["n1000"]["published"]["sol_ms"] == 0.001 and "published" not in rows["n4099"]
    assert rows["n1000"]["published"]["ratio"] == pytest.approx(rows["n1000"]["t_sol_ms"] / 0.001)
    baselines.write_text("{}")
    broken = _solbench("sol", folder, "-H", "H200", "--baselines", baselines)
    assert broken.returncode == 2 and "baselines.json: baselines: Field required" in broken.stderr


@needs_sample
def test_an_imported_suite_reimports_unchanged(from_folders, tmp_path):
    report, output = from_folders
    again = import_benchmark(output, tmp_path, cpu_tier=False)
    assert again.kinds() == report.kinds() and again.workloads == report.workloads
    for folder in find_problem_folders(output):
        twin = tmp_path / folder.relative_to(output)
        assert (twin / "definition.json").read_text() == (folder / "definition.json").read_text()


def test_missing_safetensors_files_are_noted_unless_a_data_root_holds_them(tmp_path):
    workloads = vector_workloads(8, 16)
    for workload in workloads:
        workload["inputs"]["y"] = {"type": "safetensors", "path": "data/trace/y.safetensors", "tensor_key": "y"}
    _upstream_problem(tmp_path / "src", workloads)
    missing = import_benchmark(tmp_path / "src", tmp_path / "out", cpu_tier=False).notes_of("missing-data")
    assert [(n.field, n.lines) for n in missing] == [("inputs.y.path", [1, 2])]
    assert "data/trace/y.safetensors" in missing[0].message
    (tmp_path / "data_root/data/trace").mkdir(parents=True)
    (tmp_path / "data_root/data/trace/y.safetensors").write_bytes(b"")
    found = import_benchmark(tmp_path / "src", tmp_path / "out", data_roots=(tmp_path / "data_root",), cpu_tier=False)
    assert found.notes_of("missing-data") == []


def test_an_unknown_subset_keeps_its_name_and_a_shared_definition_name_is_noted(tmp_path):
    row = {
        "name": "001_vector_add",
        "description": "",
        "hf_id": "",
        "axes": json.dumps(VECTOR_ADD["axes"]),
        "inputs": json.dumps(VECTOR_ADD["inputs"]),
        "outputs": json.dumps(VECTOR_ADD["outputs"]),
        "reference": VECTOR_ADD["reference"],
        "workloads": json.dumps(vector_workloads(8)),
    }
    _write_parquet(tmp_path / "src/data/L1.parquet", [row])
    _write_parquet(tmp_path / "src/data/Extra Set.parquet", [row])
    report = import_benchmark(tmp_path / "src", tmp_path / "out", cpu_tier=False)
    assert [(s.set, s.subset) for s in report.sets] == [("L1", "L1"), ("Extra-Set", "Extra Set")]
    assert [n.problem for n in report.notes_of("unknown-subset")] == ["Extra-Set/001_vector_add"]
    clash = report.notes_of("name-clash")[0]
    assert (clash.problem, clash.field) == ("Extra-Set/001_vector_add", "name") and "L1/001_vector_add" in clash.message


@needs_sample
def test_an_imported_problem_gets_its_cpu_tier_or_a_note_saying_why_not(tmp_path):
    """The import derives workload.cpu.jsonl beside the published workloads; a problem read from safetensors files
    cannot be scaled down and gets a no-cpu-tier note naming the file instead."""
    source = tmp_path / "src"
    for name in (
        "L1/006_hyena_depthwise_conv1d_split_gate",
        "FlashInfer-Bench/018_mla_paged_decode_h16_ckv512_kpe64_ps1",
    ):
        shutil.copytree(SAMPLE / name, source / name)
    report = import_benchmark(source, tmp_path / "out")
    assert (tmp_path / "out" / "L1" / "006_hyena_depthwise_conv1d_split_gate" / "workload.cpu.jsonl").is_file()
    [note] = report.notes_of("no-cpu-tier")
    assert note.problem.startswith("FIB/018") and ".safetensors" in note.message


@needs_sample
def test_importing_again_leaves_no_stale_cpu_tier_or_baselines(tmp_path):
    """A CPU tier or baselines file from an earlier import describes other workloads: importing again removes them
    rather than reading them in place of the published workloads."""
    source = tmp_path / "src"
    shutil.copytree(SAMPLE / "FlashInfer-Bench/021_rmsnorm_h128", source / "FlashInfer-Bench/021_rmsnorm_h128")
    first = import_benchmark(source, tmp_path / "out", cpu_tier=False)
    folder = tmp_path / "out" / "FIB" / "021_rmsnorm_h128"
    (folder / "workload.cpu.jsonl").write_text(
        json.dumps({"uuid": "old", "axes": {"batch_size": 1}, "inputs": {}}) + "\n"
    )
    again = import_benchmark(source, tmp_path / "out", cpu_tier=False)
    assert not (folder / "workload.cpu.jsonl").exists() and again.workloads == first.workloads
    assert again.baselines_file is not None
    (folder / "metadata.json").unlink()
    (source / "FlashInfer-Bench/021_rmsnorm_h128/metadata.json").unlink()
    assert import_benchmark(source, tmp_path / "out", cpu_tier=False).baselines_file is None
    assert not (tmp_path / "out" / "baselines.json").exists()
