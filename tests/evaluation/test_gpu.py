"""CUDA paths: run by scripts/device-check on a machine with a GPU, skipped elsewhere."""

from dataclasses import replace

import pytest

from conftest import make_solution
from evaluation.test_languages import TRITON_ADD
from solbench.evaluation import evaluate
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus as S

pytestmark = pytest.mark.gpu

CUDA_ADD = """
#include <torch/extension.h>

__global__ void add_kernel(const float* x, const float* y, float* z, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}

void add(torch::Tensor x, torch::Tensor y, torch::Tensor z) {
    int64_t n = x.numel();
    add_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), z.data_ptr<float>(), n);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add", &add); }
"""


@pytest.fixture
def cuda_config(fast_config):
    return replace(fast_config, device="cuda", timing=replace(fast_config.timing, budget_s=0.2))


@pytest.mark.parametrize("timer", ["cuda_events", "cuda_profiler"])
def test_pytorch_solution_on_cuda(vector_add_problem, cuda_config, timer):
    traces = evaluate(
        load_problem(vector_add_problem),
        make_solution("def run(x, y):\n    return x + y\n"),
        replace(cuda_config, timer=timer),
    )
    assert [t.evaluation.status for t in traces] == [S.PASSED, S.PASSED]
    details = traces[0].evaluation.solbench
    assert details.timing.backend == timer and details.device == "cuda"
    assert details.clock.get("state") and "NVIDIA" in traces[0].evaluation.environment.hardware


def test_triton_solution_compiles_for_the_gpu(vector_add_problem, cuda_config):
    traces = evaluate(
        load_problem(vector_add_problem), make_solution(TRITON_ADD, language="triton", dps=True), cuda_config
    )
    assert [t.evaluation.status for t in traces] == [S.PASSED, S.PASSED]


def test_cuda_cpp_solution_builds_with_the_torch_binding(vector_add_problem, cuda_config):
    solution = make_solution(CUDA_ADD, language="cuda_cpp", entry="add.cu::add", dps=True)
    traces = evaluate(load_problem(vector_add_problem), solution, replace(cuda_config, build_timeout_s=900))
    assert [t.evaluation.status for t in traces] == [S.PASSED, S.PASSED], traces[0].evaluation.log[-3000:]


def test_side_stream_work_is_inside_the_measured_time(vector_add_problem, cuda_config):
    """A solution that returns while its work still runs on another stream is timed to the end of that work."""
    source = """
        import torch
        side = None
        def run(x, y):
            global side
            side = side or torch.cuda.Stream()
            z = torch.empty_like(x)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                a = torch.randn(4096, 4096, device=x.device)
                for _ in range(20):
                    a = a @ a / 64
                torch.add(x, y, out=z)
            torch.cuda.current_stream().wait_stream(side)
            return z
        """
    traces = evaluate(load_problem(vector_add_problem), make_solution(source), cuda_config)
    assert traces[0].evaluation.status is S.PASSED
    assert traces[0].evaluation.performance.latency_ms > 1.0  # 20 matmuls of 4096^3 cannot take less


def test_l2_flush_covers_twice_the_l2():
    import torch

    from solbench.sandbox.flush import CudaCacheFlusher

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    assert CudaCacheFlusher("cuda").bytes >= 2 * l2
