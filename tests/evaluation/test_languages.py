"""The Triton interpreter path and the C++ torch-extension path, on the CPU."""

import pytest

from conftest import make_solution
from solbench.evaluation import evaluate
from solbench.spec import load_problem
from solbench.spec.trace import EvaluationStatus as S

TRITON_ADD = """
import torch
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)

def run(x, y, z):
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, z, n, BLOCK=1024)
"""

CPP_ADD = """
#include <torch/extension.h>

torch::Tensor add(torch::Tensor x, torch::Tensor y) {
    auto z = torch::empty_like(x);
    auto xs = x.data_ptr<float>(), ys = y.data_ptr<float>(), zs = z.data_ptr<float>();
    #pragma omp parallel for num_threads(2)  // an OpenMP runtime of its own: its idle workers must not count
    for (int64_t i = 0; i < x.numel(); ++i) zs[i] = xs[i] + ys[i];
    return z;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add", &add); }
"""


@pytest.mark.slow
def test_triton_solution_runs_in_the_interpreter_on_cpu(vector_add_problem, fast_config):
    pytest.importorskip("triton")
    traces = evaluate(
        load_problem(vector_add_problem), make_solution(TRITON_ADD, language="triton", dps=True), fast_config
    )
    assert [t.evaluation.status for t in traces] == [S.PASSED, S.PASSED]
    assert "triton" in traces[0].evaluation.environment.libs


@pytest.mark.slow
@pytest.mark.cxx
def test_cpp_solution_builds_as_a_torch_extension(vector_add_problem, fast_config):
    from dataclasses import replace

    solution = make_solution(
        CPP_ADD,
        language="cpp",
        entry="add.cpp::add",
        compile_options={"cflags": ["-DSOLBENCH_TEST=1", "-fopenmp"], "ld_flags": ["-fopenmp"]},
    )
    traces = evaluate(load_problem(vector_add_problem), solution, replace(fast_config, build_timeout_s=600))
    assert [t.evaluation.status for t in traces] == [S.PASSED, S.PASSED], traces[0].evaluation.log[-2000:]


@pytest.mark.slow
@pytest.mark.cxx
def test_cpp_compile_error_is_reported(vector_add_problem, fast_config):
    # The error comes first and is fatal, so the compiler stops before parsing torch's headers (30 s here).
    solution = make_solution(
        "this is not C++;\n#include <torch/extension.h>\n",
        language="cpp",
        entry="bad.cpp::add",
        compile_options={"cflags": ["-Wfatal-errors"]},
    )
    traces = evaluate(load_problem(vector_add_problem), solution, fast_config)
    assert [t.evaluation.status for t in traces] == [S.COMPILE_ERROR, S.COMPILE_ERROR]
    assert "compilation failed" in traces[0].evaluation.log
