"""Is T_SOL a lower bound on this machine? Measured time of good CPU implementations over T_SOL.

With `--hardware local` (the CPU probe), every ratio measured / T_SOL must be at least 1: a
kernel faster than the speed of light means the model or the probe is wrong. The problems are
written here: memory-bound (copy-like, normalisation) and compute-bound (matrix products,
attention), each evaluated with its reference as the solution through the real evaluator.

Usage: python benchmarks/sol_validity.py [--probe] [--budget SECONDS] [--hardware ID --device cuda]
(scripts/device-check runs it with --hardware H200 --device cuda on a GPU machine.)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

PROBLEMS = {
    "vector_add_fp32_64M": (
        {"x": (["N"], "float32"), "y": (["N"], "float32")},
        {"z": (["N"], "float32")},
        "def run(x, y):\n    return x + y\n",
        {"N": 64 << 20},
    ),
    "rmsnorm_fp32_8192x4096": (
        {"x": (["B", "H"], "float32"), "w": (["H"], "float32")},
        {"y": (["B", "H"], "float32")},
        "import torch\ndef run(x, w):\n    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w\n",
        {"B": 8192, "H": 4096},
    ),
    "softmax_fp32_4096x8192": (
        {"x": (["B", "H"], "float32")},
        {"y": (["B", "H"], "float32")},
        "import torch\ndef run(x):\n    return torch.softmax(x, -1)\n",
        {"B": 4096, "H": 8192},
    ),
    "matmul_fp32_2048": (
        {"a": (["M", "K"], "float32"), "b": (["K", "N"], "float32")},
        {"c": (["M", "N"], "float32")},
        "def run(a, b):\n    return a @ b\n",
        {"M": 2048, "K": 2048, "N": 2048},
    ),
    "matmul_bf16_4096": (
        {"a": (["M", "K"], "bfloat16"), "b": (["K", "N"], "bfloat16")},
        {"c": (["M", "N"], "bfloat16")},
        "def run(a, b):\n    return a @ b\n",
        {"M": 4096, "K": 4096, "N": 4096},
    ),
    "attention_fp32_causal_s2048": (
        {
            "q": (["B", "Hd", "S", "D"], "float32"),
            "k": (["B", "Hd", "S", "D"], "float32"),
            "v": (["B", "Hd", "S", "D"], "float32"),
        },
        {"o": (["B", "Hd", "S", "D"], "float32")},
        "import torch.nn.functional as F\ndef run(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v, "
        "is_causal=True)\n",
        {"B": 1, "Hd": 8, "S": 2048, "D": 64},
    ),
}


def write_problem(folder: Path, name: str, spec) -> Path:
    inputs, outputs, reference, axes = spec
    root = folder / name
    root.mkdir()
    definition = {
        "name": name,
        "axes": {a: {"type": "var"} for a in axes},
        "inputs": {n: {"shape": s, "dtype": d} for n, (s, d) in inputs.items()},
        "outputs": {n: {"shape": s, "dtype": d} for n, (s, d) in outputs.items()},
        "reference": reference,
    }
    (root / "definition.json").write_text(json.dumps(definition))
    (root / "workload.jsonl").write_text(
        json.dumps({"uuid": name, "axes": axes, "inputs": {n: {"type": "random"} for n in inputs}}) + "\n"
    )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", action="store_true", help="measure the CPU again before comparing")
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--hardware", default="local", help="hardware id for T_SOL (default: the CPU probe)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    from solbench.evaluation import EvaluationConfig, evaluate
    from solbench.hardware import lookup
    from solbench.hardware.local import save_probe
    from solbench.hardware.probe import probe
    from solbench.sandbox import TimingPlan
    from solbench.sol import analyze_problem
    from solbench.spec import load_problem, reference_solution

    if args.probe:
        save_probe(probe(lambda message: print(f"probing {message}", file=sys.stderr)))
    hardware = lookup(args.hardware)
    print(
        f"hardware: {hardware.name}; {hardware.memory_bandwidth_bytes_per_s / 1e9:.1f} GB/s, "
        f"fp32 {hardware.matrix_rate('float32')[0] / 1e9:.0f} GFLOP/s, "
        f"bf16 {hardware.matrix_rate('bfloat16')[0] / 1e9:.0f} GFLOP/s"
    )
    config = EvaluationConfig(
        device=args.device,
        rounds=1,
        time_reference=False,
        check_precision=False,
        timing=TimingPlan(budget_s=args.budget),
        timeout_s=600,
    )
    print(f"{'problem':32} {'bound':>8} {'T_SOL ms':>10} {'measured ms':>12} {'ratio':>7}")
    worst = float("inf")
    with tempfile.TemporaryDirectory() as folder:
        for name, spec in PROBLEMS.items():
            problem = load_problem(write_problem(Path(folder), name, spec))
            [sol] = analyze_problem(problem, hardware)
            [trace] = evaluate(problem, reference_solution(problem.definition), config)
            measured = trace.evaluation.performance.latency_ms if trace.evaluation.performance else float("nan")
            ratio = measured / sol.t_sol_ms
            worst = min(worst, ratio)
            print(f"{name:32} {sol.bound:>8} {sol.t_sol_ms:>10.3f} {measured:>12.3f} {ratio:>7.2f}")
    print(f"lowest measured/T_SOL: {worst:.2f} ({'valid lower bound' if worst >= 1 else 'VIOLATED'})")


if __name__ == "__main__":
    main()
