"""suite.families, suite.architectures and suite.targets: how `solbench suite stats` counts the suite's makeup."""

import json
from collections import Counter

from solbench.spec.definition import Definition
from solbench.suite.architectures import architecture_of, architectures, base_name
from solbench.suite.families import families_of
from solbench.suite.stats import SuiteStats, TierStats
from solbench.suite.targets import TARGETS, target_report


def _definition(name: str, op_type: str, tags=(), dtype: str = "bfloat16") -> Definition:
    return Definition.model_validate(
        {
            "name": name,
            "op_type": op_type,
            "tags": list(tags),
            "axes": {"n": {"type": "var"}},
            "inputs": {"x": {"shape": ["n"], "dtype": dtype}},
            "outputs": {"y": {"shape": ["n"], "dtype": "bfloat16"}},
            "reference": "def run(x):\n    return x\n",
        }
    )


def test_families_come_from_tags_op_type_name_and_dtype():
    assert families_of(_definition("deepseek-v3_mla_paged_decode", "attention_decode")) == {"attention", "mla"}
    assert families_of(_definition("x_router_topk_e128k8", "topk")) == {"moe"}
    assert families_of(_definition("x_rope_d128", "rope")) == {"rope_kv"}
    assert families_of(_definition("x_gemm", "gemm", dtype="float4_e2m1fn_x2")) == {"nvfp4"}
    assert families_of(_definition("x_scan", "cumsum", tags=["family:ssm"])) == {"ssm"}
    assert families_of(_definition("x_gemm", "gemm")) == set()
    # "mla" only as a word: a name that merely contains the letters is not MLA
    assert "mla" not in families_of(_definition("x_smlab_norm", "rmsnorm"))


def test_variants_of_one_architecture_count_once(tmp_path):
    configs = tmp_path / "model-configs.json"
    same = {"hidden_size": 7168, "num_experts": 256}
    configs.write_text(
        json.dumps(
            {
                "models": [
                    {"name": "DeepSeek-V3", "hf_id": "a/v3", "source": "s1", **same},
                    {"name": "DeepSeek-R1", "hf_id": "a/r1", "source": "s2", **same},
                    {"name": "Qwen2.5-7B", "hidden_size": 3584},
                    {"name": "Qwen2.5-7B-Instruct", "hidden_size": 3584, "max_position_embeddings": 32768},
                    {"name": "Qwen2.5-14B", "hidden_size": 5120},
                ]
            }
        )
    )
    assert architecture_of("DeepSeek-V3", configs) == architecture_of("DeepSeek-R1", configs)
    assert architecture_of("Qwen2.5-7B-Instruct", configs) == "Qwen2.5-7B"
    assert (
        len(
            architectures(
                ["DeepSeek-V3", "DeepSeek-R1", "Qwen2.5-7B", "Qwen2.5-7B-Instruct", "Qwen2.5-14B", "dlrm-dcnv2"],
                configs,
            )
        )
        == 4
    )
    assert base_name("Mistral-7B-v0.3") == "Mistral-7B" and base_name("Gemma-3-1B-it") == "Gemma-3-1B"
    assert base_name("Llama-3.1-8B") == "Llama-3.1-8B"


def test_targets_report_what_is_met_and_what_is_not():
    stats = SuiteStats(
        problems=300,
        counts={"set": Counter({"L1": 100, "L2": 10}), "pass": Counter(backward=50)},
        families=Counter(attention=80, moe=5),
        architectures={f"m{i}" for i in range(130)},
        tiers={"gpu": TierStats("gpu", workload_counts=[16, 20], largest_bytes=[500_000_000] * 2)},
    )
    met = {row["target"]: row["met"] for row in target_report(stats)}
    assert len(met) == len(TARGETS)
    assert met["problems"] and met["architectures"] and met["L1"] and met["backward"] and met["family attention"]
    assert not met["L2"] and not met["family moe"] and not met["Quant"]
    assert met["median largest GPU-tier workload"] and met["GPU-tier workloads of the problem with fewest"]
    stats.tiers["gpu"].workload_counts.append(8)
    assert not {r["target"]: r["met"] for r in target_report(stats)}["GPU-tier workloads of the problem with fewest"]
