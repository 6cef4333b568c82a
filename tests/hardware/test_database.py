"""The hardware database: every number sourced, derivations checked against published figures."""

import pytest

from solbench.hardware import HardwareError, device_files, lookup, resolve

T = 1e12


def test_every_figure_has_a_source():
    for device in device_files().values():
        spec = resolve(device)
        for unit, table in (("tensor", spec.tensor_flops), ("cuda_core", spec.vector_flops)):
            for precision in table:
                assert spec.sources[f"{unit}.{precision}"], (device.id, unit, precision)
        assert spec.sources["memory_bandwidth_bytes_per_s"] and spec.memory_bandwidth_bytes_per_s > 0


@pytest.mark.parametrize("name", ["h200", "H200", "nvidia_h200", "b200_LOCKED", "a100"])
def test_lookup_is_case_insensitive_and_knows_aliases(name):
    assert lookup(name).id in ("H200", "B200_1500MHz", "A100_SXM4_80GB")


def test_unknown_id_lists_the_known_ones():
    with pytest.raises(HardwareError, match=r"unknown hardware 'MI300X' \(known: A100_SXM4_80GB, B200, .*local\)"):
        lookup("MI300X")


def test_locked_b200_matches_the_sol_execbench_figures():
    """SOL-ExecBench's B200 at 1.5 GHz: BF16 ~1.81 PFLOP/s, FP8 ~3.62, NVFP4 ~7.25, HBM 8 TB/s."""
    locked = lookup("B200_1500MHz")
    published = lookup("B200")
    assert locked.tensor_flops["bfloat16"] == pytest.approx(published.tensor_flops["bfloat16"] * 1500 / 1860)
    assert locked.tensor_flops["bfloat16"] == pytest.approx(1.81e15, rel=0.01)
    assert locked.tensor_flops["float8"] == pytest.approx(3.62e15, rel=0.01)
    assert locked.tensor_flops["float4"] == pytest.approx(7.25e15, rel=0.01)
    assert locked.vector_flops["float32"] == pytest.approx(published.vector_flops["float32"] * 1500 / 1980)
    assert locked.memory_bandwidth_bytes_per_s == published.memory_bandwidth_bytes_per_s == 8e12
    assert (
        "derived" in locked.sources["tensor.bfloat16"]
        and "derived" not in locked.sources["memory_bandwidth_bytes_per_s"]
    )


@pytest.mark.parametrize(
    "device, precision, per_sm_per_clock, clock_mhz",
    [
        ("H100_SXM", "float32", 256, 1980),  # 128 FP32 lanes x FMA
        ("A100_SXM4_80GB", "float32", 128, 1410),
        ("H200", "float32", 256, 1980),
    ],
)
def test_cuda_core_peaks_equal_sms_times_rate_times_clock(device, precision, per_sm_per_clock, clock_mhz):
    spec = lookup(device)
    assert spec.sm_count * per_sm_per_clock * clock_mhz * 1e6 == pytest.approx(spec.vector_flops[precision], rel=0.01)


@pytest.mark.parametrize(
    "device, flops_per_sm_per_clock, clock_mhz", [("H100_SXM", 4096, 1830), ("A100_SXM4_80GB", 2048, 1410)]
)
def test_dense_bf16_peaks_equal_sms_times_rate_times_clock(device, flops_per_sm_per_clock, clock_mhz):
    spec = lookup(device)
    assert spec.sm_count * flops_per_sm_per_clock * clock_mhz * 1e6 == pytest.approx(
        spec.tensor_flops["bfloat16"], rel=0.01
    )


def test_matrix_rates_pick_the_unit_a_valid_kernel_could_use():
    h100 = lookup("H100_SXM")
    rate, unit = h100.matrix_rate("float32")
    assert unit == "tensor.tf32/3" and rate == pytest.approx(494.7 * T / 3)  # 3xTF32 beats the CUDA cores
    assert h100.matrix_rate("float8") == (1978.9 * T, "tensor.float8")
    assert h100.matrix_rate("float4") == (1978.9 * T, "tensor.float8")  # no FP4 units: runs as FP8
    assert lookup("A100").matrix_rate("float8") == (312 * T, "tensor.float16")
    assert lookup("RTX4090").matrix_rate("bfloat16") == (165.2 * T, "tensor.bfloat16")
    assert h100.vector_rate("bfloat16") == 2 * h100.vector_rate("float32")


def test_special_function_rate_is_derived_from_sms_and_clock():
    h200 = lookup("H200")
    assert h200.special_ops_per_s == pytest.approx(132 * 16 * 1980e6 + 67 * T / 8)
