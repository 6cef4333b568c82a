"""The SOL-ExecBench sample (../shared/sol-execbench-sample): CPU tiers written, then every reference evaluated
as a solution on its CPU tier with `solbench run`, as a user would.

CI runs a representative few (NVFP4 through the emulation, a reference that names the CUDA device with a
scalar input that mirrors an axis, and a problem whose safetensors file is missing); SOLBENCH_SAMPLE_ALL=1
runs all 20 (the time is in docs/tiers.md).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "sol-execbench-sample"
REPRESENTATIVE = [
    "FlashInfer-Bench/018_mla_paged_decode_h16_ckv512_kpe64_ps1",
    "L1/028_hybrid_attention_mask_preparation",
    "Quant/033_nvfp4_moe_routing_with_topk_selection",
]
ALL = bool(os.environ.get("SOLBENCH_SAMPLE_ALL"))
MISSING_DATA = {
    "018_mla_paged_decode_h16_ckv512_kpe64_ps1": "mla_meta_",
    "020_moe_fp8_block_scale_ds_routing_topk8_ng8_kg4_e32_h7168_i2048": "moe_fp8_block_scale_ds_routing",
}
TOO_LARGE_FOR_A_CPU: set[str] = set()
"""None any more: L1/044 and L2/065 (22.6 and 12.7 GB of expert weights) get CPU tiers with const axes sized down,
and L1/018 (a 262,144-position KV cache its generator writes as a literal) with its generator's constant bound to
the axis (docs/tiers.md)."""


def _solbench(*args, env):
    return subprocess.run(
        [sys.executable, "-m", "solbench", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=4 * 3600,
        env={**os.environ, **env},
    )


@pytest.mark.slow
@pytest.mark.timeout(4 * 3600 if ALL else 1200)  # the sandboxed runs of a loaded 2-core machine, with room
@pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"{SAMPLE} is absent")
def test_sample_references_pass_on_their_cpu_tier(tmp_path, probed_home):
    chosen = (
        sorted(str(p.relative_to(SAMPLE)) for p in SAMPLE.glob("*/*") if (p / "definition.json").is_file())
        if ALL
        else REPRESENTATIVE
    )
    suite = tmp_path / "sample"
    for relative in chosen:
        shutil.copytree(SAMPLE / relative, suite / relative)
    tiers = _solbench("suite", "cpu-tier", suite, env=probed_home)
    assert tiers.returncode == 0, tiers.stderr
    assert "018_mla_paged_decode" in tiers.stdout and "safetensors file data/flashinfer-trace" in tiers.stdout
    out = tmp_path / "run"
    run = _solbench("run", suite, "--device", "cpu", "--rounds", "1", "--budget", "0.02", "-o", out, env=probed_home)
    summary = json.loads((out / "summary.json").read_text())
    passed = {p["problem"] for p in summary["problems"] if p["passed"] == p["workloads"] > 0}
    errors = "\n".join(summary["errors"])
    for relative in chosen:
        name = Path(relative).name
        if name in MISSING_DATA:  # no CPU tier (a file cannot be scaled): the GPU tier names the missing file
            assert (
                name not in passed
                and "safetensors file not found: data/flashinfer-trace" in errors
                and MISSING_DATA[name] in errors
            ), errors
        elif name in TOO_LARGE_FOR_A_CPU:
            assert name not in passed and "more than the memory limit" in errors, errors
        else:
            assert (suite / relative / "workload.cpu.jsonl").is_file(), relative
            assert name in passed, f"{relative}: {run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    traces = [json.loads(line) for f in out.rglob("*.jsonl") for line in f.read_text().splitlines() if line]
    assert traces and all(
        t["evaluation"]["solbench"]["tier"] == "cpu" for t in traces if t["evaluation"]["status"] == "PASSED"
    )
