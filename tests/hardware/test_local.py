"""The local CPU as hardware: probe pieces on small sizes, and the spec built from a probe."""

import pytest

from solbench.hardware import HardwareError
from solbench.hardware.local import load_probe, save_probe, spec_from_probe
from solbench.hardware.probe import ProbeResult, cache_sizes, cpu_model, measure_bandwidth, measure_matmul


def _result(**overrides):
    values = dict(
        cpu_model=cpu_model(),
        cores=2,
        cache_bytes={"L3": 32 << 20},
        bandwidth_bytes_per_s={"copy": 20e9, "read": 25e9},
        matmul_flops={"float32": 100e9, "float64": 50e9, "bfloat16": 1e9, "float16": 400e9},
    )
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


def test_a_probe_beyond_its_cpus_instruction_set_peak_is_refused():
    """Where the peaks are a ceiling (x86 SIMD), a measured matmul above one by more than 10% is refused as a
    roofline; within 10%, or where the peaks are no ceiling (another ISA, an older stored probe), it is used."""
    from solbench.hardware.local import check_probe
    from solbench.hardware.probe import isa_is_ceiling

    peaks = {"float32": 100e9, "float64": 50e9, "bfloat16": 400e9, "float16": 400e9}
    beyond = _result(isa_flops=peaks, isa_ceiling=True, matmul_flops={**peaks, "float32": 120e9})
    with pytest.raises(HardwareError, match=r"float32: measured 120 GFLOP/s, instruction-set peak 100 GFLOP/s"):
        spec_from_probe(beyond)
    check_probe(_result(isa_flops=peaks, isa_ceiling=True, matmul_flops={**peaks, "float32": 109e9}))
    assert (
        spec_from_probe(_result(isa_flops=peaks, matmul_flops={**peaks, "float32": 120e9})).tensor_flops["float32"]
        == 120e9
    )
    assert isa_is_ceiling({"avx2", "fma"}) and isa_is_ceiling({"avx512f"}) and not isa_is_ceiling({"asimd"})


def test_load_or_probe_does_not_store_a_refused_probe(tmp_path, monkeypatch):
    from solbench.hardware import local, probe

    monkeypatch.setattr(local, "local_probe_path", lambda: tmp_path / "local.json")
    monkeypatch.setattr(probe, "probe", lambda progress: _result(isa_flops={"float32": 10e9}, isa_ceiling=True))
    with pytest.raises(HardwareError, match="beyond its CPU's instruction-set peak"):
        local.load_or_probe()
    assert not (tmp_path / "local.json").exists()
