"""How fast the speed-of-light analyzer is: median milliseconds per workload.

Measured over the upstream problems (../shared/upstream-format, where present; their first,
warm-up analysis excluded) and over a model-sized problem written here: a whole Llama-3-70B
decoder layer (RMSNorm, QKV projections, RoPE, GQA attention, output projection, SwiGLU MLP) at
sequence lengths 128 to 8192.

Usage: python benchmarks/sol_speed.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT.parent / "shared" / "upstream-format"

DECODER_LAYER = """
import torch
import torch.nn.functional as F

def rms_norm(x, w):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w

def rope(x, cos, sin):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin

def run(hidden_states, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down, cos, sin):
    hidden = hidden_states
    b, s, h = hidden.shape
    x = rms_norm(hidden, attn_norm)
    q = (x @ wq.T).view(b, s, 64, 128).transpose(1, 2)
    k = (x @ wk.T).view(b, s, 8, 128).transpose(1, 2)
    v = (x @ wv.T).view(b, s, 8, 128).transpose(1, 2)
    q, k = rope(q, cos, sin), rope(k, cos, sin)
    attn = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    hidden = hidden + attn.transpose(1, 2).reshape(b, s, h) @ wo.T
    x = rms_norm(hidden, mlp_norm)
    return hidden + (F.silu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T
"""


def decoder_layer_problem(folder: Path) -> Path:
    bf16 = "bfloat16"
    inputs = {
        "hidden_states": ["batch", "seq", "hidden"],
        "attn_norm": ["hidden"],
        "wq": ["hidden", "hidden"],
        "wk": ["kv_dim", "hidden"],
        "wv": ["kv_dim", "hidden"],
        "wo": ["hidden", "hidden"],
        "mlp_norm": ["hidden"],
        "w_gate": ["intermediate", "hidden"],
        "w_up": ["intermediate", "hidden"],
        "w_down": ["hidden", "intermediate"],
        "cos": ["seq", "head_dim"],
        "sin": ["seq", "head_dim"],
    }
    definition = {
        "name": "llama3_70b_decoder_layer",
        "description": "Llama-3-70B decoder layer (hidden 8192, 64 heads, "
        "8 KV heads, head_dim 128, intermediate 28672)",
        "axes": {
            "batch": {"type": "var"},
            "seq": {"type": "var"},
            "hidden": {"type": "const", "value": 8192},
            "kv_dim": {"type": "const", "value": 1024},
            "head_dim": {"type": "const", "value": 128},
            "intermediate": {"type": "const", "value": 28672},
        },
        "inputs": {name: {"shape": shape, "dtype": bf16} for name, shape in inputs.items()},
        "outputs": {"out": {"shape": ["batch", "seq", "hidden"], "dtype": bf16}},
        "reference": DECODER_LAYER,
    }
    root = folder / "llama3_70b_decoder_layer"
    root.mkdir()
    (root / "definition.json").write_text(json.dumps(definition))
    (root / "workload.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "uuid": f"b1-s{seq}",
                    "axes": {"batch": 1, "seq": seq},
                    "inputs": {n: {"type": "random"} for n in inputs},
                }
            )
            + "\n"
            for seq in (128, 512, 1024, 2048, 4096, 8192)
        )
    )
    return root


def per_workload_ms(problem, hardware) -> list[float]:
    from solbench.sol.analysis import analyze_workload
    from solbench.spec.inputs import inputs_for_analysis
    from solbench.spec.reference_code import import_reference

    module, _ = import_reference(problem.definition, "cpu")
    times = []
    for workload in problem.workloads:
        started = time.perf_counter()
        analyze_workload(problem, workload, hardware, module, make_inputs=inputs_for_analysis)
        times.append((time.perf_counter() - started) * 1e3)
    return times


def main() -> None:
    from solbench.hardware import lookup
    from solbench.spec import load_problem

    hardware = lookup("B200_1500MHz")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        layer = load_problem(decoder_layer_problem(Path(folder)))
        per_workload_ms(layer, hardware)  # warm-up: first use of fake tensors and the dispatcher
        rows.append(("llama3_70b_decoder_layer", per_workload_ms(layer, hardware)))
    if UPSTREAM.is_dir():
        times = []
        for path in sorted(UPSTREAM.iterdir()):
            if (path / "definition.json").exists() and path.name != "gqa_paged_decode":
                times += per_workload_ms(load_problem(path), hardware)
        rows.append(("upstream-format (all workloads)", times))
    print(f"{'problems':34} {'workloads':>9} {'median ms':>10} {'max ms':>8} {'total s':>8}")
    for name, times in rows:
        print(
            f"{name:34} {len(times):>9} {statistics.median(times):>10.2f} {max(times):>8.1f} {sum(times) / 1e3:>8.2f}"
        )


if __name__ == "__main__":
    main()
