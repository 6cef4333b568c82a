"""The local CPU as hardware: probe pieces on small sizes, and the spec built from a probe."""

import pytest

from solbench.hardware import HardwareError
from solbench.hardware.local import load_probe, save_probe, spec_from_probe
from solbench.hardware.probe import ProbeResult, cache_sizes, cpu_model, measure_bandwidth, measure_matmul


def _result(**overrides):
    values = dict(cpu_model=cpu_model(), cores=2, cache_bytes={"L3": 32 << 20},
                  bandwidth_bytes_per_s={"copy": 20e9, "read": 25e9},
                  matmul_flops={"float32": 100e9, "float64": 50e9, "bfloat16": 1e9, "float16": 400e9})
    values.update(overrides)
    return ProbeResult(**values)


def test_spec_from_probe_takes_the_best_rates():
    spec = spec_from_probe(_result(isa_flops={"float32": 80e9, "bfloat16": 3000e9}))
    assert spec.kind == "cpu" and spec.id == "local"
    assert spec.memory_bandwidth_bytes_per_s == 25e9  # best kernel
    assert spec.matrix_rate("float32")[0] == 100e9  # measured beat the (too low) peak
    assert spec.tensor_flops["bfloat16"] == 3000e9  # the instruction-set peak beats the measured 1 GFLOP/s
    assert spec.tensor_flops["float16"] == 400e9
    assert spec.tensor_flops["int8"] == 100e9  # no figure at all: converts and runs at fp32
    assert "best kernel: read" in spec.sources["memory_bandwidth_bytes_per_s"]
    assert "instruction-set peak" in spec.sources["tensor.bfloat16"]


def test_instruction_set_peaks():
    from solbench.hardware.probe import isa_peaks

    peaks = isa_peaks({"avx512f", "amx_bf16", "amx_int8", "avx512_fp16"}, cores=2, clock_mhz=4000)
    assert peaks["float32"][0] == 2 * 64 * 4e9  # 2 FMA ports x 16 lanes x 2 FLOPs
    assert peaks["float64"][0] == 2 * 32 * 4e9
    assert peaks["bfloat16"][0] == 2 * 2048 * 4e9 and "AMX" in peaks["bfloat16"][1]
    assert peaks["int8"][0] == 2 * 4096 * 4e9
    assert isa_peaks({"avx2", "fma"}, cores=1, clock_mhz=1000)["float32"][0] == 32 * 1e9


def test_probe_results_round_trip_and_belong_to_this_cpu(tmp_path):
    path = save_probe(_result(), tmp_path / "local.json")
    assert load_probe(path).matmul_flops["float32"] == 100e9
    save_probe(_result(cpu_model="Some Other CPU"), path)
    with pytest.raises(HardwareError, match="was measured on 'Some Other CPU'.*run `solbench hw probe` again"):
        load_probe(path)
    with pytest.raises(HardwareError, match="no local hardware probe at .*run `solbench hw probe` first"):
        load_probe(tmp_path / "missing.json")


def test_measurements_have_the_right_shape():
    bandwidth = measure_bandwidth(8 << 20, repeats=2)
    assert set(bandwidth) == {"copy", "scale", "add", "triad", "read"} and all(v > 0 for v in bandwidth.values())
    flops, size = measure_matmul("float32", max_size=256)
    assert flops > 0 and size == 256
    assert all(size > 0 for size in cache_sizes().values())
