"""State-space and linear-attention kernels: Mamba2 (SSD), Mamba1 selective scan, gated DeltaNet, RWKV-7.

The family SOL-ExecBench covers with about 18 problems (Mamba2 chunk scan and segsum, intra-chunk
diagonal, selective scan, conv1d with gating, dt softplus and its backward, gated delta rule,
RWKV-7 decay and WKV7). Every problem takes its dimensions from a model in
../shared/model-configs.json and follows that model's code path:

- Mamba2-2.7B, Nemotron-H-56B and NVIDIA-Nemotron-3-Nano-30B-A3B: ``mamba2_chunk_scan``,
  ``segment_sum``, ``causal_conv1d_fn`` / ``causal_conv1d_update``, ``mamba2_selective_state_update``
  and ``MambaRMSNormGated`` in transformers' ``modeling_mamba2.py`` (``NemotronHRMSNormGated`` in
  ``modeling_nemotron_h.py``);
- Jamba-v0.1 (Mamba-1 layers): ``mamba_selective_scan`` (the sequential path),
  ``mamba_selective_state_update`` and ``JambaMambaMixer.forward`` in ``modeling_jamba.py``;
- Qwen3-Next-80B-A3B (gated DeltaNet layers): ``torch_chunk_gated_delta_rule``,
  ``torch_recurrent_gated_delta_rule``, ``Qwen3NextRMSNormGated`` and the gating in
  ``Qwen3NextGatedDeltaNet.forward`` in ``modeling_qwen3_next.py``;
- RWKV-7-World-1.5B: the time-mixing recurrence of BlinkDL's reference
  (github.com/BlinkDL/RWKV-LM, ``RWKV-v7/rwkv_v7_numpy.py``: ``S = S*w - (S@kk)(kk*a)^T + v k^T``,
  ``y = S r``, ``w = exp(-sigmoid(tanh(x W1) W2 + w0) / sqrt(e))``); transformers has no RWKV-7.

Scans, cumulative sums of log-decays and state recurrences run in float32 whatever the input dtype
(as the models' torch paths do), so the evaluator's float64 golden run stays within the tolerance
over long sequences. Inputs come from a generated ``make_inputs`` with the models' initialisation
ranges (Mamba2: A in [-16, -1], dt log-uniform in [0.001, 0.1]; gated DeltaNet: log-decay from a
logsigmoid, beta in (0, 1); RWKV-7: decay in (exp(-1/sqrt(e)), 1)), so decays neither vanish nor blow up.

Two tiers (docs/tiers.md): ``workload.jsonl`` holds 16 GPU-scale workloads per problem (1k-64k training
tokens, decode batches to 512), ``workload.cpu.jsonl`` the recipe's 8 small ones, each well under a second
on a 2-core CPU.
"""

from __future__ import annotations

import math

from suite_recipes.shapes import grid, tokens
from suite_recipes.l2 import body, draft
from suite_recipes.models import model
from suite_recipes.sweeps import tiered
from solbench.suite.draft import ProblemDraft

# --- models (values copied from ../shared/model-configs.json) ------------------------------------------

MAMBA2_27B = model("Mamba2-2.7B", "state-spaces/mamba2-2.7b", "language",
                   {"hidden_size": 2560, "ssm_state_size": 128, "conv_kernel": 4, "expand": 2,
                    "mamba_head_dim": 64, "n_groups": 1, "chunk_size": 256, "derived.d_inner": 5120,
                    "derived.mamba_num_heads": 80})
NEMOTRON_H_56B = model("Nemotron-H-56B-Base-8K", "nvidia/Nemotron-H-56B-Base-8K", "language",
                       {"hidden_size": 8192, "chunk_size": 128, "conv_kernel": 4, "expand": 2, "mamba_head_dim": 64,
                        "mamba_num_heads": 256, "n_groups": 8, "ssm_state_size": 256, "layer_norm_eps": 1e-05,
                        "use_conv_bias": True})
NEMOTRON_NANO = model("NVIDIA-Nemotron-3-Nano-30B-A3B", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "language",
                      {"hidden_size": 2688, "chunk_size": 128, "conv_kernel": 4, "mamba_head_dim": 64, "mamba_num_heads": 64,
                       "n_groups": 8, "ssm_state_size": 128, "layer_norm_eps": 1e-05})
JAMBA = model("Jamba-v0.1", "ai21labs/Jamba-v0.1", "language",
              {"hidden_size": 4096, "mamba_expand": 2, "mamba_d_state": 16, "mamba_dt_rank": 256,
               "mamba_d_conv": 4, "rms_norm_eps": 1e-06})
QWEN3_NEXT = model("Qwen3-Next-80B-A3B-Thinking", "Qwen/Qwen3-Next-80B-A3B-Thinking", "language",
                   {"linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
                    "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "rms_norm_eps": 1e-06})
RWKV7 = model("RWKV-7-World-1.5B", "fla-hub/rwkv7-1.5B-world", "language",
              {"hidden_size": 2048, "head_dim": 64, "decay_low_rank_dim": 96, "derived.num_heads": 32})

FAMILY_TAG = "family:ssm"
"""Every problem of this module carries it (with ``kernel:<name>``), so the family can be counted."""

# --- input generators (raw expressions for l2's make_inputs) ------------------------------------------

_A_LOG = "torch.log(torch.rand(shape, device=device) * 15 + 1)"  # Mamba2 init: A = -exp(A_log), |A| in [1, 16]
_DT_BIAS = ("(lambda d: d + torch.log(-torch.expm1(-d)))(torch.exp(torch.rand(shape, device=device) "
            "* (math.log(0.1) - math.log(0.001)) + math.log(0.001)))")  # inverse softplus of log-uniform dt
_DT_RAW = "torch.randn(shape, device=device) * 0.5"
_NEG_DA = "-(torch.rand(shape, device=device) * 0.1 + 0.001)"  # dt * A per step
_LOGSIGMOID = "F.logsigmoid(torch.randn(shape, device=device) + 2.0)"  # gated DeltaNet log-decay, mean ~ -0.2
_UNIT = "torch.rand(shape, device=device)"


def _ssm(d: ProblemDraft, set_name: str, kernel: str, gpu: list[dict[str, int]]) -> ProblemDraft:
    """Family tags, the set, and the two tiers: ``gpu`` becomes workload.jsonl, the recipe's own small
    workloads workload.cpu.jsonl (`sweeps.tiered`)."""
    return tiered(d, gpu, min_count=1, high=0, shift="batch", set=set_name,
                  extra_tags=[FAMILY_TAG, f"kernel:{kernel}"] + list(d.extra_tags))


# --- GPU-tier workloads: upstream scale (training 1k-64k tokens, decode batches to 512), 16 per problem --------

TRAIN_TOKENS = (1024, 1536, 2048, 3072, 4096, 6144, 8192, 10240, 12288, 16384, 20480, 24576, 32768, 40960,
                49152, 65536)
GEMM_TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
DECODE_BATCHES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
TRAIN_SEQUENCES = ((1, 1024), (1, 2048), (2, 1024), (1, 4096), (4, 1024), (2, 4096), (1, 8192), (8, 1024),
                   (4, 4096), (2, 8192), (1, 16384), (8, 4096), (4, 8192), (2, 16384), (1, 32768), (8, 8192))
"""(batch, tokens per sequence): 1k to 64k tokens, every length a multiple of 256 (whole chunks)."""
SHORT_SEQUENCES = ((1, 1024), (1, 2048), (2, 1024), (1, 3072), (1, 4096), (4, 1024), (2, 2048), (3, 2048),
                   (1, 6144), (2, 4096), (1, 8192), (8, 1024), (4, 2048), (1, 12288), (2, 8192), (1, 16384))
"""Up to 16k tokens, for outputs quadratic in the chunk (the segsum matrix: 5.4 GB at 64k tokens)."""
STEP_SEQUENCES = ((1, 512), (2, 512), (1, 1024), (4, 512), (2, 1024), (8, 512), (4, 1024), (16, 512),
                  (8, 1024), (32, 512), (16, 1024), (48, 512), (32, 1024), (64, 512), (48, 1024), (64, 1024))
"""512 to 64k tokens in sequences of at most 1,024 steps, for references that loop over time steps in Python
(the analyzer traces every step)."""


def _seqs(pairs, *, per_chunk: int = 0):
    """(batch, seq) pairs as ``batch_size``/``seq_len`` axes, or ``num_chunks`` = seq / per_chunk."""
    if per_chunk:
        return [{"batch_size": b, "num_chunks": t // per_chunk} for b, t in pairs]
    return [{"batch_size": b, "seq_len": t} for b, t in pairs]


# ================================ Mamba2 (SSD) ==========================================================

_SEGSUM = '''@torch.no_grad()
def run(dA):
    """exp(segment_sum(dA)): L[..., i, j] = exp(sum_{j<t<=i} dA[t]) for j <= i, 0 above the diagonal."""
    x = dA.to(_acc(dA))
    length = x.shape[-1]
    x = x[..., None].expand(*x.shape, length)
    strict = torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device), diagonal=-1)
    x = x.masked_fill(~strict, 0)
    segsum = torch.cumsum(x, dim=-2)
    lower = torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device), diagonal=0)
    return torch.exp(segsum.masked_fill(~lower, -torch.inf))
'''


def mamba2_segsum(m) -> ProblemDraft:
    heads, chunk = m.config["derived.mamba_num_heads"], m.config["chunk_size"]
    return _ssm(draft(
        m, f"mamba2-27b_ssd_segsum_h{heads}_c{chunk}", "ssm_segsum",
        f"{m.name} SSD intra-chunk decay matrix: L = exp(segment_sum(A*dt)) per chunk of chunk_size {chunk}, "
        f"{heads} heads (segment_sum in transformers modeling_mamba2.py: cumulative sums down the rows of a "
        "strictly-lower masked copy, -inf above the diagonal, so exp gives 0 there); fp32.",
        {"batch_size": None, "num_chunks": (None, "seq_len / chunk_size"), "num_heads": (heads, "d_inner / headdim"),
         "chunk_size": (chunk, "chunk_size")},
        {"dA": (["batch_size", "num_heads", "num_chunks", "chunk_size"], "float32", _NEG_DA)},
        {"L": (["batch_size", "num_heads", "num_chunks", "chunk_size", "chunk_size"], "float32")},
        body(_SEGSUM), grid(batch_size=(1, 1, 2, 1, 3, 2, 4, 5), num_chunks=(1, 2, 1, 3, 1, 2, 1, 1))),
        "L1", "segsum", _seqs(SHORT_SEQUENCES, per_chunk=chunk))


_CHUNK_DIAG = '''@torch.no_grad()
def run(x, dA_cumsum, B, C):
    """Y_diag of the SSD chunk scan: within each chunk, y_l = sum_{s<=l} (C_l . B_s) exp(Acs_l - Acs_s) x_s."""
    acc = _acc(x)
    heads, groups = x.shape[3], B.shape[3]
    Bh = B.to(acc).repeat_interleave(heads // groups, dim=3)
    Ch = C.to(acc).repeat_interleave(heads // groups, dim=3)
    acs = dA_cumsum.to(acc)  # [b, h, c, l]
    length = acs.shape[-1]
    diff = acs[..., :, None] - acs[..., None, :]
    lower = torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device))
    decay = torch.exp(diff.masked_fill(~lower, -torch.inf))  # [b, h, c, l, s]
    scores = torch.einsum("bclhn,bcshn->bhcls", Ch, Bh) * decay
    y = torch.einsum("bhcls,bcshp->bclhp", scores, x.to(acc))
    return y.to(x.dtype)
'''


def mamba2_chunk_diag(m) -> ProblemDraft:
    heads, p, n, g, chunk = (m.config["mamba_num_heads"], m.config["mamba_head_dim"], m.config["ssm_state_size"],
                             m.config["n_groups"], m.config["chunk_size"])
    return _ssm(draft(
        m, f"nemotron-3-nano_ssd_chunk_diag_h{heads}_n{n}", "ssm_chunk_diag",
        f"{m.name} Mamba2 SSD intra-chunk diagonal blocks (Y_diag in mamba2_chunk_scan): per chunk of {chunk}, "
        f"G = C B^T over the state ({n}), masked by the decay exp(A_cumsum_l - A_cumsum_s), applied to the "
        f"dt-scaled x; {heads} heads of {p}, {g} groups of B/C. bf16 in and out, fp32 inside.",
        {"batch_size": None, "num_chunks": None, "chunk_size": (chunk, "chunk_size"),
         "num_heads": (heads, "mamba_num_heads"), "head_dim": (p, "mamba_head_dim"),
         "num_groups": (g, "n_groups"), "state_size": (n, "ssm_state_size")},
        {"x": (["batch_size", "num_chunks", "chunk_size", "num_heads", "head_dim"], "bfloat16", 0.1),
         "dA_cumsum": (["batch_size", "num_heads", "num_chunks", "chunk_size"], "float32",
                       f"torch.cumsum({_NEG_DA}, dim=-1)"),
         "B": (["batch_size", "num_chunks", "chunk_size", "num_groups", "state_size"], "bfloat16", 1.0),
         "C": (["batch_size", "num_chunks", "chunk_size", "num_groups", "state_size"], "bfloat16", 1.0)},
        {"y_diag": (["batch_size", "num_chunks", "chunk_size", "num_heads", "head_dim"], "bfloat16")},
        body(_CHUNK_DIAG), grid(batch_size=(1, 1, 2, 1, 1, 2, 3, 4), num_chunks=(1, 2, 1, 3, 4, 2, 1, 1))),
        "L1", "chunk_diag", _seqs(TRAIN_SEQUENCES, per_chunk=chunk))


_CHUNK_STATE = '''@torch.no_grad()
def run(x, dA_cumsum, B):
    """Each chunk's contribution to the state: sum_l exp(Acs_last - Acs_l) B_l x_l^T  -> [b, c, h, p, n]."""
    acc = _acc(x)
    heads, groups = x.shape[3], B.shape[3]
    Bh = B.to(acc).repeat_interleave(heads // groups, dim=3)
    acs = dA_cumsum.to(acc)
    decay = torch.exp(acs[..., -1:] - acs)  # [b, h, c, l]
    Bd = Bh * decay.permute(0, 2, 3, 1)[..., None]
    return torch.einsum("bclhn,bclhp->bchpn", Bd, x.to(acc))
'''


def mamba2_chunk_state(m) -> ProblemDraft:
    heads, p, n, g, chunk = (m.config["derived.mamba_num_heads"], m.config["mamba_head_dim"],
                             m.config["ssm_state_size"], m.config["n_groups"], m.config["chunk_size"])
    return _ssm(draft(
        m, f"mamba2-27b_ssd_chunk_state_h{heads}_n{n}", "ssm_chunk_state",
        f"{m.name} Mamba2 SSD chunk states (step 2 of mamba2_chunk_scan): for each chunk of {chunk}, "
        f"sum over positions of exp(A_cumsum_last - A_cumsum_l) * B_l (x) x_l, giving a [{p} x {n}] state per head "
        f"({heads} heads, {g} group). x (dt-scaled) and B in bf16; states in fp32.",
        {"batch_size": None, "num_chunks": None, "chunk_size": (chunk, "chunk_size"),
         "num_heads": (heads, "d_inner / headdim"), "head_dim": (p, "mamba_head_dim"),
         "num_groups": (g, "n_groups"), "state_size": (n, "ssm_state_size")},
        {"x": (["batch_size", "num_chunks", "chunk_size", "num_heads", "head_dim"], "bfloat16", 0.1),
         "dA_cumsum": (["batch_size", "num_heads", "num_chunks", "chunk_size"], "float32",
                       f"torch.cumsum({_NEG_DA}, dim=-1)"),
         "B": (["batch_size", "num_chunks", "chunk_size", "num_groups", "state_size"], "bfloat16", 1.0)},
        {"states": (["batch_size", "num_chunks", "num_heads", "head_dim", "state_size"], "float32")},
        body(_CHUNK_STATE), grid(batch_size=(1, 1, 2, 1, 3, 2, 4, 5), num_chunks=(1, 2, 1, 3, 1, 2, 1, 1))),
        "L1", "chunk_state", _seqs(TRAIN_SEQUENCES, per_chunk=chunk))


_STATE_PASSING = '''@torch.no_grad()
def run(states, dA_chunk_sum, initial_states):
    """Inter-chunk recurrence: S_c = exp(dA_sum_c) * S_(c-1) + states_c, from initial_states.

    Returns the state entering each chunk [b, c, h, p, n] and the final state [b, h, p, n].
    """
    acc = _acc(states)
    s = initial_states.to(acc)
    entering = []
    for c in range(states.shape[1]):
        entering.append(s)
        s = torch.exp(dA_chunk_sum[:, :, c].to(acc))[:, :, None, None] * s + states[:, c].to(acc)
    return torch.stack(entering, dim=1), s
'''


def mamba2_state_passing(m) -> ProblemDraft:
    heads, p, n = m.config["mamba_num_heads"], m.config["mamba_head_dim"], m.config["ssm_state_size"]
    return _ssm(draft(
        m, f"nemotron-3-nano_ssd_state_passing_h{heads}_n{n}", "ssm_state_passing",
        f"{m.name} Mamba2 SSD inter-chunk state passing (step 3 of mamba2_chunk_scan, written as the "
        "recurrence the state-passing kernel runs): each chunk's entering state is the previous one decayed by "
        f"exp(sum of A*dt over the chunk) plus that chunk's own state; {heads} heads, state [{p} x {n}], fp32.",
        {"batch_size": None, "num_chunks": None, "num_heads": (heads, "mamba_num_heads"),
         "head_dim": (p, "mamba_head_dim"), "state_size": (n, "ssm_state_size")},
        {"states": (["batch_size", "num_chunks", "num_heads", "head_dim", "state_size"], "float32", 1.0),
         "dA_chunk_sum": (["batch_size", "num_heads", "num_chunks"], "float32",
                          "-(torch.rand(shape, device=device) * 2.0 + 0.05)"),
         "initial_states": (["batch_size", "num_heads", "head_dim", "state_size"], "float32", 1.0)},
        {"entering_states": (["batch_size", "num_chunks", "num_heads", "head_dim", "state_size"], "float32"),
         "final_state": (["batch_size", "num_heads", "head_dim", "state_size"], "float32")},
        body(_STATE_PASSING), grid(batch_size=(1, 1, 2, 1, 2, 1, 4, 2), num_chunks=(2, 4, 2, 8, 4, 16, 2, 8))),
        "L1", "state_passing", _seqs(TRAIN_SEQUENCES, per_chunk=m.config["chunk_size"]))


_CHUNK_SCAN = '''@torch.no_grad()
def run(x, dt, A_log, B, C, D, dt_bias, initial_states):
    """transformers mamba2_chunk_scan with dt_softplus=True, D and initial states (seq_len a multiple of the chunk)."""
    acc = _acc(dt)
    batch, seq_len, heads, head_dim = x.shape
    groups, chunk = B.shape[2], @CHUNK@
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))  # [b, t, h]
    A = -torch.exp(A_log.to(acc))
    xf = x.to(acc)
    Bh = B.to(acc).repeat_interleave(heads // groups, dim=2)
    Ch = C.to(acc).repeat_interleave(heads // groups, dim=2)
    xs = xf * dt[..., None]
    dA = (A * dt)  # [b, t, h]
    c = seq_len // chunk
    xs, Bh, Ch = (t.reshape(batch, c, chunk, heads, -1) for t in (xs, Bh, Ch))
    dA = dA.reshape(batch, c, chunk, heads).permute(0, 3, 1, 2)  # [b, h, c, l]
    acs = torch.cumsum(dA, dim=-1)
    lower = torch.tril(torch.ones(chunk, chunk, dtype=torch.bool, device=x.device))
    L = torch.exp((acs[..., :, None] - acs[..., None, :]).masked_fill(~lower, -torch.inf))
    scores = torch.einsum("bclhn,bcshn->bhcls", Ch, Bh) * L
    y_diag = torch.einsum("bhcls,bcshp->bclhp", scores, xs)
    decay_states = torch.exp(acs[..., -1:] - acs)  # [b, h, c, l]
    Bd = Bh * decay_states.permute(0, 2, 3, 1)[..., None]
    states = torch.einsum("bclhn,bclhp->bchpn", Bd, xs)
    s = initial_states.to(acc)
    entering = []
    for i in range(c):
        entering.append(s)
        s = torch.exp(acs[:, :, i, -1])[:, :, None, None] * s + states[:, i]
    entering = torch.stack(entering, dim=1)
    y_off = torch.einsum("bclhn,bchpn->bclhp", Ch, entering) * torch.exp(acs).permute(0, 2, 3, 1)[..., None]
    y = (y_diag + y_off).reshape(batch, seq_len, heads, head_dim) + xf * D.to(acc)[:, None]
    return y.to(x.dtype), s
'''


def mamba2_chunk_scan(m, name: str, *, tp: int = 1) -> ProblemDraft:
    heads = m.config.get("mamba_num_heads") or m.config["derived.mamba_num_heads"]
    p, n, g, chunk = m.config["mamba_head_dim"], m.config["ssm_state_size"], m.config["n_groups"], m.config["chunk_size"]
    heads, g = heads // tp, g // tp
    shard = (f"; tensor-parallel shard TP={tp} ({heads} of the heads and {g} of the {g * tp} B/C groups per rank, "
             "as Megatron splits the mixer)") if tp > 1 else ""
    return _ssm(draft(
        m, name, "ssm_chunk_scan",
        f"{m.name} Mamba2 SSD chunked scan, the whole mamba2_chunk_scan of transformers (dt_softplus=True): "
        f"dt = softplus(dt + dt_bias), A = -exp(A_log), intra-chunk diagonal blocks, chunk states, inter-chunk "
        f"recurrence from initial_states, state-to-output and the D skip; chunk_size {chunk}, {heads} heads of {p}, "
        f"state {n}, {g} group(s){shard}. Returns y (bf16) and the final state (fp32).",
        {"batch_size": None, "seq_len": (None, f"a multiple of chunk_size {chunk}"),
         "num_heads": (heads, "mamba_num_heads" + (f" / TP={tp}" if tp > 1 else "")),
         "head_dim": (p, "mamba_head_dim"), "num_groups": (g, "n_groups" + (f" / TP={tp}" if tp > 1 else "")),
         "state_size": (n, "ssm_state_size")},
        {"x": (["batch_size", "seq_len", "num_heads", "head_dim"], "bfloat16", 1.0),
         "dt": (["batch_size", "seq_len", "num_heads"], "bfloat16", _DT_RAW),
         "A_log": (["num_heads"], "float32", _A_LOG),
         "B": (["batch_size", "seq_len", "num_groups", "state_size"], "bfloat16", 1.0),
         "C": (["batch_size", "seq_len", "num_groups", "state_size"], "bfloat16", 1.0),
         "D": (["num_heads"], "float32", "torch.rand(shape, device=device) + 0.5"),
         "dt_bias": (["num_heads"], "float32", _DT_BIAS),
         "initial_states": (["batch_size", "num_heads", "head_dim", "state_size"], "float32", 1.0)},
        {"y": (["batch_size", "seq_len", "num_heads", "head_dim"], "bfloat16"),
         "final_state": (["batch_size", "num_heads", "head_dim", "state_size"], "float32")},
        body(_CHUNK_SCAN).replace("@CHUNK@", str(chunk)),
        grid(batch_size=(1, 1, 2, 1, 3, 2, 4, 5),
             seq_len=tuple(chunk * k for k in (1, 2, 1, 3, 1, 2, 1, 1)))),
        "L2", "chunk_scan", _seqs(TRAIN_SEQUENCES))


_MIXER_SCAN = '''@torch.no_grad()
def run(projected_states, conv_weight, conv_bias, dt_bias, A_log, D, norm_weight):
    """NemotronHMamba2Mixer from the in_proj output to the gated norm (the torch path of
    mamba2_split_conv1d_scan_combined, out_proj excluded): split z | xBC | dt, causal conv1d + SiLU on xBC,
    split x | B | C, the SSD chunk scan (dt softplus, D, zero initial state), then y * silu(z) RMS-normalised
    over groups of d_inner / n_groups, times norm_weight."""
    acc = _acc(dt_bias)
    heads, head_dim, groups, state, chunk = @HEADS@, @HEAD_DIM@, @GROUPS@, @STATE@, @CHUNK@
    d_inner = heads * head_dim
    batch, seq_len, _ = projected_states.shape
    z, xBC, dt = projected_states.split([d_inner, d_inner + 2 * groups * state, heads], dim=-1)
    xBC = F.conv1d(xBC.transpose(1, 2).to(acc), conv_weight.to(acc)[:, None, :], conv_bias.to(acc),
                   padding=conv_weight.shape[-1] - 1, groups=xBC.shape[-1])[..., :seq_len]
    xBC = F.silu(xBC).to(projected_states.dtype).transpose(1, 2)
    x, B, C = xBC.split([d_inner, groups * state, groups * state], dim=-1)
    x = x.reshape(batch, seq_len, heads, head_dim).to(acc)
    Bh = B.reshape(batch, seq_len, groups, state).to(acc).repeat_interleave(heads // groups, dim=2)
    Ch = C.reshape(batch, seq_len, groups, state).to(acc).repeat_interleave(heads // groups, dim=2)
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))
    dA = -torch.exp(A_log.to(acc)) * dt
    xs = x * dt[..., None]
    c = seq_len // chunk
    xs, Bh, Ch = (t.reshape(batch, c, chunk, heads, -1) for t in (xs, Bh, Ch))
    acs = torch.cumsum(dA.reshape(batch, c, chunk, heads).permute(0, 3, 1, 2), dim=-1)  # [b, h, c, l]
    lower = torch.tril(torch.ones(chunk, chunk, dtype=torch.bool, device=x.device))
    L = torch.exp((acs[..., :, None] - acs[..., None, :]).masked_fill(~lower, -torch.inf))
    y = torch.einsum("bhcls,bcshp->bclhp", torch.einsum("bclhn,bcshn->bhcls", Ch, Bh) * L, xs)
    Bd = Bh * torch.exp(acs[..., -1:] - acs).permute(0, 2, 3, 1)[..., None]
    states = torch.einsum("bclhn,bclhp->bchpn", Bd, xs)
    s = torch.zeros_like(states[:, 0])
    entering = []
    for i in range(c):
        entering.append(s)
        s = torch.exp(acs[:, :, i, -1])[:, :, None, None] * s + states[:, i]
    y = y + torch.einsum("bclhn,bchpn->bclhp", Ch, torch.stack(entering, dim=1)) \\
        * torch.exp(acs).permute(0, 2, 3, 1)[..., None]
    y = y.reshape(batch, seq_len, heads, head_dim) + x * D.to(acc)[:, None]
    g = y.reshape(batch, seq_len, d_inner) * F.silu(z.to(acc))  # the scan output stays fp32 into the norm
    gg = g.reshape(batch, seq_len, groups, -1)
    gg = gg * torch.rsqrt(gg.pow(2).mean(-1, keepdim=True) + @EPS@)
    return (norm_weight.to(acc) * gg.reshape(batch, seq_len, d_inner)).to(projected_states.dtype)
'''


def mamba2_mixer_scan(m) -> ProblemDraft:
    heads, p, n, g, chunk = (m.config["mamba_num_heads"], m.config["mamba_head_dim"], m.config["ssm_state_size"],
                             m.config["n_groups"], m.config["chunk_size"])
    kernel, eps = m.config["conv_kernel"], m.config["layer_norm_eps"]
    d_inner = heads * p
    conv_dim = d_inner + 2 * g * n
    proj = d_inner + conv_dim + heads
    reference = _MIXER_SCAN
    for key, value in (("HEADS", heads), ("HEAD_DIM", p), ("GROUPS", g), ("STATE", n), ("CHUNK", chunk),
                       ("EPS", eps)):
        reference = reference.replace(f"@{key}@", repr(value))
    return _ssm(draft(
        m, f"nemotron-3-nano_mamba2_mixer_scan_h{heads}_n{n}", "mamba2_mixer_scan",
        f"{m.name} Mamba2 mixer between in_proj and out_proj, as mamba2_split_conv1d_scan_combined fuses it in "
        f"training (NemotronHMamba2Mixer's torch path): split the in_proj output ({proj} = z {d_inner} | xBC "
        f"{conv_dim} | dt {heads}); causal conv1d (kernel {kernel}, bias) + SiLU over xBC; the SSD chunk scan "
        f"(chunk {chunk}, {heads} heads of {p}, state {n}, {g} groups, dt softplus, D); then the gated RMSNorm "
        f"(y * silu(z), groups of {d_inner // g}, eps {eps}). bf16 in and out, fp32 scan.",
        {"batch_size": None, "seq_len": (None, f"a multiple of chunk_size {chunk}"),
         "proj_size": (proj, "intermediate_size + conv_dim + mamba_num_heads"),
         "conv_dim": (conv_dim, "intermediate_size + 2 * n_groups * ssm_state_size"),
         "kernel_size": (kernel, "conv_kernel"), "num_heads": (heads, "mamba_num_heads"),
         "d_inner": (d_inner, "mamba_num_heads * mamba_head_dim")},
        {"projected_states": (["batch_size", "seq_len", "proj_size"], "bfloat16", 1.0),
         "conv_weight": (["conv_dim", "kernel_size"], "bfloat16", kernel ** -0.5),
         "conv_bias": (["conv_dim"], "bfloat16", 0.1),
         "dt_bias": (["num_heads"], "float32", _DT_BIAS),
         "A_log": (["num_heads"], "float32", _A_LOG),
         "D": (["num_heads"], "float32", "torch.rand(shape, device=device) + 0.5"),
         "norm_weight": (["d_inner"], "bfloat16", _UNIT + " + 0.5")},
        {"output": (["batch_size", "seq_len", "d_inner"], "bfloat16")},
        body(reference), grid(batch_size=(1, 1, 2, 1, 2, 1, 3, 4),
                              seq_len=tuple(chunk * k for k in (1, 2, 1, 3, 2, 4, 1, 1)))),
        "L2", "mixer_scan", _seqs(TRAIN_SEQUENCES))


_STATE_UPDATE2 = '''@torch.no_grad()
def run(state, x, dt, A_log, B, C, D, dt_bias):
    """One decode step of a Mamba2 layer (mamba2_selective_state_update with dt_softplus and D; the z gate is
    applied later by the gated norm, so z=None as in the mixer)."""
    acc = torch.float64 if state.dtype == torch.float64 else torch.float32
    batch, heads, head_dim = x.shape
    groups = B.shape[1]
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))[..., None]  # [b, h, 1]
    A = -torch.exp(A_log.to(acc))
    dA = torch.exp(dt * A[:, None])[..., None]  # [b, h, 1, 1]
    Bh = B.to(acc).repeat_interleave(heads // groups, dim=1)  # [b, h, n]
    Ch = C.to(acc).repeat_interleave(heads // groups, dim=1)
    xf = x.to(acc)
    new_state = state.to(acc) * dA + (dt * xf)[..., None] * Bh[:, :, None, :]
    out = (new_state * Ch[:, :, None, :]).sum(-1) + xf * D.to(acc)[:, None]
    return out.to(x.dtype), new_state.to(state.dtype)
'''


def mamba2_state_update(m) -> ProblemDraft:
    heads, p, n, g = m.config["mamba_num_heads"], m.config["mamba_head_dim"], m.config["ssm_state_size"], m.config["n_groups"]
    return _ssm(draft(
        m, f"nemotron-3-nano_mamba2_state_update_h{heads}_n{n}", "ssm_state_update",
        f"{m.name} Mamba2 decode step (mamba2_selective_state_update as the mixer calls it: dt_softplus=True, D, "
        f"z=None): state <- state * exp(softplus(dt + dt_bias) * A) + dt * x (x) B; out = state . C + D x; "
        f"{heads} heads of {p}, state {n}, {g} groups. One token per sequence; the state is fp32.",
        {"batch_size": (None, "sequences decoding one token each"), "num_heads": (heads, "mamba_num_heads"),
         "head_dim": (p, "mamba_head_dim"), "num_groups": (g, "n_groups"), "state_size": (n, "ssm_state_size")},
        {"state": (["batch_size", "num_heads", "head_dim", "state_size"], "float32", 1.0),
         "x": (["batch_size", "num_heads", "head_dim"], "bfloat16", 1.0),
         "dt": (["batch_size", "num_heads"], "bfloat16", _DT_RAW),
         "A_log": (["num_heads"], "float32", _A_LOG),
         "B": (["batch_size", "num_groups", "state_size"], "bfloat16", 1.0),
         "C": (["batch_size", "num_groups", "state_size"], "bfloat16", 1.0),
         "D": (["num_heads"], "float32", "torch.rand(shape, device=device) + 0.5"),
         "dt_bias": (["num_heads"], "float32", _DT_BIAS)},
        {"out": (["batch_size", "num_heads", "head_dim"], "bfloat16"),
         "new_state": (["batch_size", "num_heads", "head_dim", "state_size"], "float32")},
        body(_STATE_UPDATE2), [{"batch_size": b} for b in (1, 2, 4, 8, 12, 16, 24, 32)]),
        "L1", "state_update", tokens(DECODE_BATCHES, "batch_size"))


# --- causal depthwise conv1d (Mamba2 xBC, gated DeltaNet qkv) --------------------------------------------

_CONV1D = '''@torch.no_grad()
def run(x, weight@BIAS_ARG@):
    """causal_conv1d_fn: depthwise conv over time with kernel_size - 1 left padding, then SiLU. x: [b, channels, t]."""
    acc = _acc(x)
    seq_len = x.shape[-1]
    out = F.conv1d(x.to(acc), weight.to(acc)[:, None, :], @BIAS@, padding=weight.shape[-1] - 1,
                   groups=x.shape[1])[..., :seq_len]
    return F.silu(out).to(x.dtype)
'''


def causal_conv1d(m, name: str, channels: int, kernel: int, channels_text: str, *, bias: bool) -> ProblemDraft:
    inputs = {"x": (["batch_size", "channels", "seq_len"], "bfloat16", 1.0),
              "weight": (["channels", "kernel_size"], "bfloat16", kernel ** -0.5)}
    if bias:
        inputs["bias"] = (["channels"], "bfloat16", 0.1)
    reference = _CONV1D.replace("@BIAS_ARG@", ", bias" if bias else "").replace(
        "@BIAS@", "bias.to(acc)" if bias else "None")
    return _ssm(draft(
        m, name, "causal_conv1d",
        f"{m.name} short causal depthwise convolution before the scan (causal_conv1d_fn with activation silu): "
        f"{channels} channels ({channels_text}), kernel {kernel}, {'with' if bias else 'no'} bias, "
        "layout [batch, channels, seq_len]; bf16, fp32 inside.",
        {"batch_size": None, "seq_len": None, "channels": (channels, channels_text), "kernel_size": (kernel, "conv kernel")},
        inputs, {"out": (["batch_size", "channels", "seq_len"], "bfloat16")}, body(reference),
        grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 3), seq_len=(1, 16, 64, 127, 128, 512, 255, 100))),
        "L1", "causal_conv1d", _seqs(TRAIN_SEQUENCES))


_CONV1D_UPDATE = '''@torch.no_grad()
def run(x, conv_state, weight, bias):
    """causal_conv1d_update for one decode token: shift the token into the rolling state, depthwise conv, SiLU."""
    acc = _acc(x)
    window = torch.cat([conv_state, x[..., None]], dim=-1).to(acc)  # [b, channels, kernel]
    new_state = window[..., 1:]
    out = (window * weight.to(acc)).sum(-1) + bias.to(acc)
    return F.silu(out).to(x.dtype), new_state.to(conv_state.dtype)
'''


def causal_conv1d_update(m) -> ProblemDraft:
    d_inner, n, g, kernel = m.config["derived.d_inner"], m.config["ssm_state_size"], m.config["n_groups"], \
        m.config["conv_kernel"]
    channels = d_inner + 2 * g * n
    text = f"d_inner {d_inner} + 2 * n_groups * ssm_state_size"
    return _ssm(draft(
        m, f"mamba2-27b_causal_conv1d_update_c{channels}", "causal_conv1d_update",
        f"{m.name} decode-time short convolution (causal_conv1d_update, activation silu): the new token enters the "
        f"rolling conv_state of kernel-1 = {kernel - 1} past inputs, a depthwise conv over {channels} channels "
        f"({text}) with bias gives this step's x/B/C; returns the output and the shifted state.",
        {"batch_size": (None, "sequences decoding one token each"), "channels": (channels, text),
         "state_len": (kernel - 1, "conv_kernel - 1"), "kernel_size": (kernel, "conv_kernel")},
        {"x": (["batch_size", "channels"], "bfloat16", 1.0),
         "conv_state": (["batch_size", "channels", "state_len"], "bfloat16", 1.0),
         "weight": (["channels", "kernel_size"], "bfloat16", kernel ** -0.5),
         "bias": (["channels"], "bfloat16", 0.1)},
        {"out": (["batch_size", "channels"], "bfloat16"),
         "new_conv_state": (["batch_size", "channels", "state_len"], "bfloat16")},
        body(_CONV1D_UPDATE), [{"batch_size": b} for b in (1, 2, 4, 8, 16, 32, 64, 256)]),
        "L1", "causal_conv1d_update", tokens(DECODE_BATCHES, "batch_size"))


_CONV1D_BWD = '''def run(x, weight, bias, grad_output):
    """Backward of causal_conv1d_fn(x, weight, bias, activation=silu): grads of x, weight and bias (fp32 sums)."""
    acc = _acc(x)
    with torch.enable_grad():
        xv = x.detach().to(acc).requires_grad_()
        wv = weight.detach().to(acc).requires_grad_()
        bv = bias.detach().to(acc).requires_grad_()
        seq_len = x.shape[-1]
        out = F.silu(F.conv1d(xv, wv[:, None, :], bv, padding=wv.shape[-1] - 1, groups=xv.shape[1])[..., :seq_len])
        gx, gw, gb = torch.autograd.grad(out, (xv, wv, bv), grad_output.to(acc))
    return gx.to(x.dtype), gw.to(weight.dtype), gb.to(bias.dtype)
'''


def causal_conv1d_backward(m) -> ProblemDraft:
    d_inner, n, g, kernel = m.config["derived.d_inner"], m.config["ssm_state_size"], m.config["n_groups"], \
        m.config["conv_kernel"]
    channels = d_inner + 2 * g * n
    text = f"d_inner {d_inner} + 2 * n_groups * ssm_state_size"
    return _ssm(draft(
        m, f"mamba2-27b_causal_conv1d_backward_c{channels}", "causal_conv1d_backward",
        f"Backward of the {m.name} short causal conv (causal_conv1d_fn, kernel {kernel}, bias, SiLU) over "
        f"{channels} channels ({text}), as in a training step: gradients of x (bf16) and of the fp32 weight and bias "
        "(summed over batch and time in fp32), given grad_output; the forward is recomputed.",
        {"batch_size": None, "seq_len": None, "channels": (channels, text), "kernel_size": (kernel, "conv_kernel")},
        {"x": (["batch_size", "channels", "seq_len"], "bfloat16", 1.0),
         "weight": (["channels", "kernel_size"], "float32", kernel ** -0.5),
         "bias": (["channels"], "float32", 0.1),
         "grad_output": (["batch_size", "channels", "seq_len"], "bfloat16", 1.0)},
        {"grad_x": (["batch_size", "channels", "seq_len"], "bfloat16"),
         "grad_weight": (["channels", "kernel_size"], "float32"),
         "grad_bias": (["channels"], "float32")},
        body(_CONV1D_BWD), grid(batch_size=(1, 1, 2, 1, 4, 1, 2, 3), seq_len=(16, 64, 64, 127, 128, 512, 255, 100)),
        backward=True),
        "L1", "causal_conv1d_backward", _seqs(TRAIN_SEQUENCES))


# --- dt softplus (Mamba2 discretisation) --------------------------------------------------------------

_DT_SOFTPLUS = '''@torch.no_grad()
def run(dt, dt_bias, A_log):
    """dt = softplus(dt + dt_bias) (dt_limit (0, inf)), dA = dt * A with A = -exp(A_log); both fp32."""
    acc = torch.float64 if dt_bias.dtype == torch.float64 else torch.float32
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))
    return dt, dt * -torch.exp(A_log.to(acc))
'''


def dt_softplus(m) -> ProblemDraft:
    heads = m.config["mamba_num_heads"]
    return _ssm(draft(
        m, f"nemotron-h-56b_dt_softplus_h{heads}", "dt_softplus",
        f"{m.name} Mamba2 time-step discretisation (the start of mamba2_chunk_scan with dt_softplus=True): "
        f"dt = softplus(dt_raw + dt_bias), dA = dt * -exp(A_log), over {heads} heads per token; dt_raw comes "
        "from in_proj in bf16, the results are fp32.",
        {"num_tokens": (None, "tokens (batch x sequence)"), "num_heads": (heads, "mamba_num_heads")},
        {"dt": (["num_tokens", "num_heads"], "bfloat16", _DT_RAW),
         "dt_bias": (["num_heads"], "float32", _DT_BIAS),
         "A_log": (["num_heads"], "float32", _A_LOG)},
        {"dt_out": (["num_tokens", "num_heads"], "float32"), "dA": (["num_tokens", "num_heads"], "float32")},
        body(_DT_SOFTPLUS), [{"num_tokens": t} for t in (1, 7, 64, 128, 255, 1024, 2048, 8192)]),
        "L1", "dt_softplus", tokens(TRAIN_TOKENS))


_DT_SOFTPLUS_BWD = '''def run(dt, dt_bias, grad_dt):
    """Backward of dt_out = softplus(dt + dt_bias): grad_dt_raw = grad * sigmoid(dt + dt_bias), bias grad summed."""
    acc = torch.float64 if dt_bias.dtype == torch.float64 else torch.float32
    g_raw = grad_dt.to(acc) * torch.sigmoid(dt.to(acc) + dt_bias.to(acc))  # d softplus(x) / dx = sigmoid(x)
    return g_raw.to(dt.dtype), g_raw.sum(0)
'''


def dt_softplus_backward(m) -> ProblemDraft:
    heads = m.config["derived.mamba_num_heads"]
    return _ssm(draft(
        m, f"mamba2-27b_dt_softplus_backward_h{heads}", "dt_softplus_backward",
        f"Backward of the {m.name} time-step softplus (dt = softplus(dt_raw + dt_bias), {heads} heads), as the "
        "Mamba2 training kernels compute it: grad_dt_raw = grad_dt * sigmoid(dt_raw + dt_bias) (bf16, as dt_raw) "
        "and grad_dt_bias summed over tokens in fp32.",
        {"num_tokens": (None, "tokens (batch x sequence)"), "num_heads": (heads, "d_inner / headdim")},
        {"dt": (["num_tokens", "num_heads"], "bfloat16", _DT_RAW),
         "dt_bias": (["num_heads"], "float32", _DT_BIAS),
         "grad_dt": (["num_tokens", "num_heads"], "float32", 1.0)},
        {"grad_dt_raw": (["num_tokens", "num_heads"], "bfloat16"), "grad_dt_bias": (["num_heads"], "float32")},
        body(_DT_SOFTPLUS_BWD), [{"num_tokens": t} for t in (1, 7, 64, 128, 255, 1024, 2048, 8192)],
        backward=True),
        "L1", "dt_softplus_backward", tokens(TRAIN_TOKENS))


# --- gated RMSNorm (Mamba2 / Nemotron-H: gate before a group-wise norm) ----------------------------------

_GATED_NORM_MAMBA = '''@torch.no_grad()
def run(hidden_states, gate, weight):
    """MambaRMSNormGated: x * silu(gate), RMS-normalised over groups of @GROUP@ channels, times weight."""
    acc = _acc(hidden_states)
    x = hidden_states.to(acc) * F.silu(gate.to(acc))
    xg = x.reshape(*x.shape[:-1], -1, @GROUP@)
    xg = xg * torch.rsqrt(xg.pow(2).mean(-1, keepdim=True) + @EPS@)
    return weight * xg.reshape(x.shape).to(hidden_states.dtype)
'''


def mamba_gated_rmsnorm(m, name: str, *, tp: int = 1) -> ProblemDraft:
    d_inner = m.config["mamba_num_heads"] * m.config["mamba_head_dim"]
    groups, eps = m.config["n_groups"], m.config["layer_norm_eps"]
    group = d_inner // groups
    width = d_inner // tp
    shard = f"; tensor-parallel shard TP={tp} ({width} channels, {groups // tp} whole groups per rank)" if tp > 1 else ""
    reference = _GATED_NORM_MAMBA.replace("@GROUP@", str(group)).replace("@EPS@", repr(eps))
    return _ssm(draft(
        m, name, "gated_rmsnorm",
        f"{m.name} Mamba2 output norm (NemotronHRMSNormGated, norm_before_gate=False): y * silu(z), then RMSNorm "
        f"over groups of intermediate_size / n_groups = {group} channels (eps {eps}), times weight; "
        f"intermediate_size {d_inner} (mamba_num_heads x mamba_head_dim){shard}. bf16, fp32 inside.",
        {"num_tokens": (None, "tokens (batch x sequence)"), "hidden_size": (width, "mamba_num_heads * mamba_head_dim"
                                                                            + (f" / TP={tp}" if tp > 1 else ""))},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "gate": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "weight": (["hidden_size"], "bfloat16", 0.1, 1.0)},
        {"output": (["num_tokens", "hidden_size"], "bfloat16")},
        body(reference), [{"num_tokens": t} for t in (1, 7, 32, 128, 255, 512, 1024, 2048)]),
        "L1", "gated_rmsnorm", tokens(TRAIN_TOKENS))


_GATED_NORM_MAMBA_BWD = '''def run(hidden_states, gate, weight, grad_output):
    """Backward of MambaRMSNormGated (gate before a group-wise RMSNorm): grads of x, z and weight."""
    acc = _acc(hidden_states)
    with torch.enable_grad():
        h = hidden_states.detach().to(acc).requires_grad_()
        z = gate.detach().to(acc).requires_grad_()
        w = weight.detach().to(acc).requires_grad_()
        x = h * F.silu(z)
        xg = x.reshape(*x.shape[:-1], -1, @GROUP@)
        xg = xg * torch.rsqrt(xg.pow(2).mean(-1, keepdim=True) + @EPS@)
        out = w * xg.reshape(x.shape)
        gh, gz, gw = torch.autograd.grad(out, (h, z, w), grad_output.to(acc))
    return gh.to(hidden_states.dtype), gz.to(gate.dtype), gw.to(weight.dtype)
'''


def mamba_gated_rmsnorm_backward(m) -> ProblemDraft:
    d_inner = m.config["mamba_num_heads"] * m.config["mamba_head_dim"]
    groups, eps = m.config["n_groups"], m.config["layer_norm_eps"]
    group = d_inner // groups
    reference = _GATED_NORM_MAMBA_BWD.replace("@GROUP@", str(group)).replace("@EPS@", repr(eps))
    return _ssm(draft(
        m, f"nemotron-3-nano_gated_rmsnorm_backward_h{d_inner}", "gated_rmsnorm_backward",
        f"Backward of the {m.name} Mamba2 gated norm (y * silu(z), RMSNorm over groups of {group} = "
        f"intermediate_size {d_inner} / n_groups {groups}, eps {eps}, times weight): gradients of y and z (bf16) "
        "and of the fp32 weight (summed over tokens in fp32), given grad_output.",
        {"num_tokens": (None, "tokens in the micro-batch"), "hidden_size": (d_inner, "mamba_num_heads * mamba_head_dim")},
        {"hidden_states": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "gate": (["num_tokens", "hidden_size"], "bfloat16", 1.0),
         "weight": (["hidden_size"], "float32", 0.1, 1.0),
         "grad_output": (["num_tokens", "hidden_size"], "bfloat16", 1.0)},
        {"grad_hidden_states": (["num_tokens", "hidden_size"], "bfloat16"),
         "grad_gate": (["num_tokens", "hidden_size"], "bfloat16"),
         "grad_weight": (["hidden_size"], "float32")},
        body(reference), [{"num_tokens": t} for t in (1, 7, 32, 128, 255, 512, 1024, 2048)], backward=True),
        "L1", "gated_rmsnorm_backward", tokens(TRAIN_TOKENS))


# ================================ Mamba-1 (Jamba) =====================================================

_SELECTIVE_SCAN = '''@torch.no_grad()
def run(u, delta, A, B, C, D, z, delta_bias):
    """mamba_selective_scan (sequential path) with delta_bias, delta_softplus=True, D and the z gate.

    u, delta, z: [b, d, t]; A: [d, n] (already -exp(A_log)); B, C: [b, n, t]. The state stays fp32.
    """
    acc = _acc(A)
    dt = F.softplus(delta.to(acc) + delta_bias.to(acc)[:, None])  # [b, d, t]
    uf = u.to(acc)
    Af, Bf, Cf = A.to(acc), B.to(acc), C.to(acc)
    dtu = dt * uf
    state = torch.zeros(u.shape[0], u.shape[1], A.shape[1], dtype=acc, device=u.device)
    ys = []
    for t in range(u.shape[-1]):
        state = torch.exp(Af * dt[:, :, t, None]) * state + dtu[:, :, t, None] * Bf[:, None, :, t]
        ys.append((state * Cf[:, None, :, t]).sum(-1))
    y = torch.stack(ys, dim=-1) + uf * D.to(acc)[:, None]
    return (y * F.silu(z.to(acc))).to(u.dtype)
'''


def selective_scan(m) -> ProblemDraft:
    d_inner = m.config["hidden_size"] * m.config["mamba_expand"]
    n = m.config["mamba_d_state"]
    return _ssm(draft(
        m, f"jamba-v01_selective_scan_d{d_inner}_n{n}", "selective_scan",
        f"{m.name} Mamba-1 selective scan (mamba_selective_scan in modeling_jamba.py, the sequential path): "
        f"dt = softplus(delta + delta_bias), h_t = exp(dt A) h_(t-1) + dt B_t u_t, y_t = C_t h_t + D u_t, "
        f"times silu(z); d_inner {d_inner} (hidden_size x mamba_expand), state {n}. bf16 activations, fp32 state.",
        {"batch_size": None, "seq_len": None, "d_inner": (d_inner, "hidden_size * mamba_expand"),
         "state_size": (n, "mamba_d_state")},
        {"u": (["batch_size", "d_inner", "seq_len"], "bfloat16", 1.0),
         "delta": (["batch_size", "d_inner", "seq_len"], "bfloat16", _DT_RAW),
         "A": (["d_inner", "state_size"], "float32",
               "-torch.arange(1, shape[1] + 1, device=device, dtype=torch.float32).expand(shape) "
               "* (torch.rand(shape, device=device) * 0.5 + 0.75)"),
         "B": (["batch_size", "state_size", "seq_len"], "bfloat16", 1.0),
         "C": (["batch_size", "state_size", "seq_len"], "bfloat16", 1.0),
         "D": (["d_inner"], "float32", "torch.rand(shape, device=device) + 0.5"),
         "z": (["batch_size", "d_inner", "seq_len"], "bfloat16", 1.0),
         "delta_bias": (["d_inner"], "float32", _DT_BIAS)},
        {"y": (["batch_size", "d_inner", "seq_len"], "bfloat16")},
        body(_SELECTIVE_SCAN), grid(batch_size=(1, 1, 2, 1, 1, 2, 3, 2), seq_len=(64, 96, 64, 128, 100, 128, 64, 80))),
        "L1", "selective_scan", _seqs(STEP_SEQUENCES))


_STATE_UPDATE1 = '''@torch.no_grad()
def run(state, x, dt, A, B, C, D, z, dt_bias):
    """mamba_selective_state_update (Jamba decode step): dt_softplus, D and the z gate; state [b, d, n] fp32."""
    acc = torch.float64 if state.dtype == torch.float64 else torch.float32
    dt = F.softplus(dt.to(acc) + dt_bias.to(acc))  # [b, d]
    dA = torch.exp(dt[..., None] * A.to(acc))
    xf = x.to(acc)
    new_state = state.to(acc) * dA + (dt * xf)[..., None] * B.to(acc)[:, None, :]
    out = (new_state * C.to(acc)[:, None, :]).sum(-1) + xf * D.to(acc)
    return (out * F.silu(z.to(acc))).to(x.dtype), new_state.to(state.dtype)
'''


def selective_state_update(m) -> ProblemDraft:
    d_inner = m.config["hidden_size"] * m.config["mamba_expand"]
    n = m.config["mamba_d_state"]
    return _ssm(draft(
        m, f"jamba-v01_selective_state_update_d{d_inner}_n{n}", "ssm_state_update",
        f"{m.name} Mamba-1 decode step (mamba_selective_state_update, dt_softplus=True): "
        f"h <- exp(dt A) h + dt B x, out = (C . h + D x) * silu(z), over d_inner {d_inner} channels with state {n}; "
        "one token per sequence, the state is fp32.",
        {"batch_size": (None, "sequences decoding one token each"), "d_inner": (d_inner, "hidden_size * mamba_expand"),
         "state_size": (n, "mamba_d_state")},
        {"state": (["batch_size", "d_inner", "state_size"], "float32", 1.0),
         "x": (["batch_size", "d_inner"], "bfloat16", 1.0),
         "dt": (["batch_size", "d_inner"], "bfloat16", _DT_RAW),
         "A": (["d_inner", "state_size"], "float32",
               "-torch.arange(1, shape[1] + 1, device=device, dtype=torch.float32).expand(shape) "
               "* (torch.rand(shape, device=device) * 0.5 + 0.75)"),
         "B": (["batch_size", "state_size"], "bfloat16", 1.0),
         "C": (["batch_size", "state_size"], "bfloat16", 1.0),
         "D": (["d_inner"], "float32", "torch.rand(shape, device=device) + 0.5"),
         "z": (["batch_size", "d_inner"], "bfloat16", 1.0),
         "dt_bias": (["d_inner"], "float32", _DT_BIAS)},
        {"out": (["batch_size", "d_inner"], "bfloat16"),
         "new_state": (["batch_size", "d_inner", "state_size"], "float32")},
        body(_STATE_UPDATE1), [{"batch_size": b} for b in (1, 2, 4, 8, 12, 16, 24, 32)]),
        "L1", "state_update", tokens(DECODE_BATCHES, "batch_size"))


_JAMBA_SSM = '''@torch.no_grad()
def run(hidden_states, gate, x_proj, dt_proj_weight, dt_proj_bias, dt_norm_weight, b_norm_weight, c_norm_weight,
        A_log, D):
    """JambaMambaMixer.forward after the conv: x_proj -> (dt, B, C), RMSNorm on each, dt_proj, selective scan, gate.

    hidden_states (the conv output) and gate: [b, t, d_inner]; returns the scan output [b, t, d_inner]
    (out_proj not included).
    """
    acc = _acc(hidden_states)
    rank, n = @RANK@, @STATE@
    proj = F.linear(hidden_states, x_proj)
    time_step, B, C = torch.split(proj, [rank, n, n], dim=-1)
    time_step = _rmsnorm(time_step, dt_norm_weight, @EPS@)
    B = _rmsnorm(B, b_norm_weight, @EPS@)
    C = _rmsnorm(C, c_norm_weight, @EPS@)
    dt = F.softplus(F.linear(time_step, dt_proj_weight).to(acc) + dt_proj_bias.to(acc))  # [b, t, d]
    A = -torch.exp(A_log.to(acc))  # [d, n]
    u = hidden_states.to(acc)
    Bf, Cf = B.to(acc), C.to(acc)
    dtu = dt * u
    state = torch.zeros(u.shape[0], u.shape[2], n, dtype=acc, device=u.device)
    ys = []
    for t in range(u.shape[1]):
        state = torch.exp(dt[:, t, :, None] * A) * state + dtu[:, t, :, None] * Bf[:, t, None, :]
        ys.append((state * Cf[:, t, None, :]).sum(-1))
    y = torch.stack(ys, dim=1) + u * D.to(acc)
    return (y * F.silu(gate.to(acc))).to(hidden_states.dtype)
'''


def jamba_ssm_block(m) -> ProblemDraft:
    d_inner = m.config["hidden_size"] * m.config["mamba_expand"]
    n, rank, eps = m.config["mamba_d_state"], m.config["mamba_dt_rank"], m.config["rms_norm_eps"]
    reference = _JAMBA_SSM.replace("@RANK@", str(rank)).replace("@STATE@", str(n)).replace("@EPS@", repr(eps))
    return _ssm(draft(
        m, f"jamba-v01_mamba_ssm_block_d{d_inner}_r{rank}", "mamba1_ssm_block",
        f"{m.name} Mamba mixer from the conv output to the gated scan output (JambaMambaMixer.forward): "
        f"x_proj [{rank}+2x{n} x {d_inner}] splits into dt, B, C; Jamba's RMSNorms on each (eps {eps}); "
        f"dt_proj [{d_inner} x {rank}] with bias; softplus; the selective scan over state {n} with D; times "
        "silu(gate). bf16 weights and activations, fp32 scan. out_proj is not included.",
        {"batch_size": None, "seq_len": None, "d_inner": (d_inner, "hidden_size * mamba_expand"),
         "proj_size": (rank + 2 * n, "mamba_dt_rank + 2 * mamba_d_state"), "dt_rank": (rank, "mamba_dt_rank"),
         "state_size": (n, "mamba_d_state")},
        {"hidden_states": (["batch_size", "seq_len", "d_inner"], "bfloat16", 1.0),
         "gate": (["batch_size", "seq_len", "d_inner"], "bfloat16", 1.0),
         "x_proj": (["proj_size", "d_inner"], "bfloat16", d_inner ** -0.5),
         "dt_proj_weight": (["d_inner", "dt_rank"], "bfloat16", rank ** -0.5 * 0.5),
         "dt_proj_bias": (["d_inner"], "float32", _DT_BIAS),
         "dt_norm_weight": (["dt_rank"], "bfloat16", _UNIT + " + 0.5"),
         "b_norm_weight": (["state_size"], "bfloat16", _UNIT + " + 0.5"),
         "c_norm_weight": (["state_size"], "bfloat16", _UNIT + " + 0.5"),
         "A_log": (["d_inner", "state_size"], "float32",
                   "torch.log(torch.arange(1, shape[1] + 1, device=device, dtype=torch.float32).expand(shape) "
                   "* (torch.rand(shape, device=device) * 0.5 + 0.75))"),
         "D": (["d_inner"], "float32", "torch.rand(shape, device=device) + 0.5")},
        {"output": (["batch_size", "seq_len", "d_inner"], "bfloat16")},
        body(reference), grid(batch_size=(1, 1, 2, 1, 1, 2, 3, 2), seq_len=(64, 96, 64, 128, 100, 128, 64, 80))),
        "L2", "mamba1_block", _seqs(STEP_SEQUENCES))


# ================================ Gated DeltaNet (Qwen3-Next) ===========================================

_L2NORM = '''

def _l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + eps)
'''

_CHUNK_GDR = '''@torch.no_grad()
def run(query, key, value, g, beta, initial_state):
    """torch_chunk_gated_delta_rule with use_qk_l2norm_in_kernel=True, chunk 64, from initial_state.

    query/key [b, t, hk, dk], value [b, t, hv, dv], g (log-decay) and beta [b, t, hv]; returns the output
    [b, t, hv, dv] and the final state [b, hv, dk, dv].
    """
    acc = _acc(g)
    chunk = 64
    batch, seq_len, hk, dk = key.shape
    hv, dv = value.shape[-2:]
    q = query.repeat_interleave(hv // hk, dim=2)
    k = key.repeat_interleave(hv // hk, dim=2)
    q, k, v, beta, g = (x.transpose(1, 2).to(acc) for x in (q, k, value, beta, g))
    q = _l2norm(q) * dk ** -0.5
    k = _l2norm(k)
    pad = (chunk - seq_len % chunk) % chunk
    q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
    beta, g = (F.pad(x, (0, pad)) for x in (beta, g))
    c = (seq_len + pad) // chunk
    k_beta = k * beta[..., None]
    v_beta = v * beta[..., None]
    q, k, k_beta, v_beta = (x.reshape(batch, hv, c, chunk, x.shape[-1]) for x in (q, k, k_beta, v_beta))
    cum = g.reshape(batch, hv, c, chunk).cumsum(dim=-1)
    upper = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).triu(1)
    decay = (cum[..., :, None] - cum[..., None, :]).masked_fill(upper, float("-inf")).exp()
    # (I + strictly_lower(k_beta k^T * decay)) T = I, solved by forward substitution.
    lower = -((k_beta @ k.transpose(-1, -2)) * decay).tril(-1)
    T = lower.clone()
    for i in range(1, chunk):
        row = T[..., i, :i].clone()
        T[..., i, :i] = row + (row[..., :, None] * T[..., :i, :i]).sum(-2)
    T = T + torch.eye(chunk, dtype=acc, device=q.device)
    new_values = T @ v_beta
    k_cumdecay = T @ (k_beta * cum.exp()[..., None])
    attn = (q @ k.transpose(-1, -2)) * decay
    q = q * cum.exp()[..., None]
    k = k * (cum[..., -1:] - cum).exp()[..., None]
    state = initial_state.to(acc)
    out = torch.zeros_like(new_values)
    for i in range(c):
        v_new = new_values[:, :, i] - k_cumdecay[:, :, i] @ state
        out[:, :, i] = q[:, :, i] @ state + attn[:, :, i] @ v_new
        state = state * cum[:, :, i, -1].exp()[..., None, None] + k[:, :, i].transpose(-1, -2) @ v_new
    out = out.reshape(batch, hv, -1, dv)[:, :, :seq_len].transpose(1, 2)
    return out.to(value.dtype), state
'''


def _gdn_axes(m, extra=None):
    hk, hv = m.config["linear_num_key_heads"], m.config["linear_num_value_heads"]
    dk, dv = m.config["linear_key_head_dim"], m.config["linear_value_head_dim"]
    axes = {"num_k_heads": (hk, "linear_num_key_heads"), "num_v_heads": (hv, "linear_num_value_heads"),
            "head_k_dim": (dk, "linear_key_head_dim"), "head_v_dim": (dv, "linear_value_head_dim")}
    return {**(extra or {}), **axes}


def gated_delta_rule_chunked(m) -> ProblemDraft:
    hk, hv = m.config["linear_num_key_heads"], m.config["linear_num_value_heads"]
    dk, dv = m.config["linear_key_head_dim"], m.config["linear_value_head_dim"]
    return _ssm(draft(
        m, f"qwen3-next-80b_gated_delta_rule_chunked_hv{hv}", "gated_delta_rule_chunked",
        f"{m.name} gated DeltaNet layer core in prefill (torch_chunk_gated_delta_rule in modeling_qwen3_next.py, "
        f"use_qk_l2norm_in_kernel=True, chunk 64): q/k L2-normalised, q scaled by head_k_dim^-0.5, {hk} q/k heads "
        f"shared by {hv} value heads, head dims {dk}/{dv}; the UT transform within chunks, the recurrent state "
        "between them, from initial_state. q/k/v/beta bf16, log-decay g fp32; output bf16, final state fp32.",
        _gdn_axes(m, {"batch_size": None, "seq_len": None}),
        {"query": (["batch_size", "seq_len", "num_k_heads", "head_k_dim"], "bfloat16", 1.0),
         "key": (["batch_size", "seq_len", "num_k_heads", "head_k_dim"], "bfloat16", 1.0),
         "value": (["batch_size", "seq_len", "num_v_heads", "head_v_dim"], "bfloat16", 1.0),
         "g": (["batch_size", "seq_len", "num_v_heads"], "float32", _LOGSIGMOID),
         "beta": (["batch_size", "seq_len", "num_v_heads"], "bfloat16", f"torch.sigmoid(torch.randn(shape, device=device))"),
         "initial_state": (["batch_size", "num_v_heads", "head_k_dim", "head_v_dim"], "float32", 0.1)},
        {"output": (["batch_size", "seq_len", "num_v_heads", "head_v_dim"], "bfloat16"),
         "final_state": (["batch_size", "num_v_heads", "head_k_dim", "head_v_dim"], "float32")},
        body(_L2NORM + "\n\n" + _CHUNK_GDR),
        grid(batch_size=(1, 1, 2, 1, 1, 2, 1, 4), seq_len=(1, 37, 64, 100, 128, 127, 256, 64))),
        "L2", "gated_delta_rule", _seqs(TRAIN_SEQUENCES))


_RECURRENT_GDR = '''@torch.no_grad()
def run(query, key, value, g, beta, state):
    """torch_recurrent_gated_delta_rule for one decode token (use_qk_l2norm_in_kernel=True)."""
    acc = _acc(state)
    hk, dk = key.shape[-2:]
    hv = value.shape[-2]
    q = _l2norm(query.repeat_interleave(hv // hk, dim=1).to(acc)) * dk ** -0.5  # [b, hv, dk]
    k = _l2norm(key.repeat_interleave(hv // hk, dim=1).to(acc))
    s = state.to(acc) * g.to(acc).exp()[..., None, None]
    kv_mem = (s * k[..., None]).sum(-2)
    delta = (value.to(acc) - kv_mem) * beta.to(acc)[..., None]
    s = s + k[..., None] * delta[..., None, :]
    out = (s * q[..., None]).sum(-2)
    return out.to(value.dtype), s.to(state.dtype)
'''


def gated_delta_rule_recurrent(m) -> ProblemDraft:
    hk, hv = m.config["linear_num_key_heads"], m.config["linear_num_value_heads"]
    dk, dv = m.config["linear_key_head_dim"], m.config["linear_value_head_dim"]
    return _ssm(draft(
        m, f"qwen3-next-80b_gated_delta_rule_decode_hv{hv}", "gated_delta_rule_recurrent",
        f"{m.name} gated DeltaNet decode step (torch_recurrent_gated_delta_rule, one token, "
        f"use_qk_l2norm_in_kernel=True): S <- exp(g) S; S <- S + k (x) beta (v - S^T k); o = S^T q / sqrt({dk}); "
        f"{hk} q/k heads shared by {hv} value heads, state [{dk} x {dv}] per value head in fp32.",
        _gdn_axes(m, {"batch_size": (None, "sequences decoding one token each")}),
        {"query": (["batch_size", "num_k_heads", "head_k_dim"], "bfloat16", 1.0),
         "key": (["batch_size", "num_k_heads", "head_k_dim"], "bfloat16", 1.0),
         "value": (["batch_size", "num_v_heads", "head_v_dim"], "bfloat16", 1.0),
         "g": (["batch_size", "num_v_heads"], "float32", _LOGSIGMOID),
         "beta": (["batch_size", "num_v_heads"], "bfloat16", "torch.sigmoid(torch.randn(shape, device=device))"),
         "state": (["batch_size", "num_v_heads", "head_k_dim", "head_v_dim"], "float32", 0.1)},
        {"output": (["batch_size", "num_v_heads", "head_v_dim"], "bfloat16"),
         "new_state": (["batch_size", "num_v_heads", "head_k_dim", "head_v_dim"], "float32")},
        body(_L2NORM + "\n\n" + _RECURRENT_GDR), [{"batch_size": b} for b in (1, 2, 4, 8, 12, 16, 24, 32)]),
        "L1", "gated_delta_rule", tokens(DECODE_BATCHES, "batch_size"))


_GDN_GATING = '''@torch.no_grad()
def run(a, b, A_log, dt_bias):
    """Qwen3NextGatedDeltaNet gates: g = -exp(A_log) * softplus(a + dt_bias) (fp32), beta = sigmoid(b)."""
    acc = _acc(A_log)
    g = -A_log.to(acc).exp() * F.softplus(a.to(acc) + dt_bias.to(acc))
    return g, torch.sigmoid(b.to(acc)).to(b.dtype)
'''


def gdn_gating(m) -> ProblemDraft:
    hv = m.config["linear_num_value_heads"]
    return _ssm(draft(
        m, f"qwen3-next-80b_gdn_gating_hv{hv}", "gdn_gating",
        f"{m.name} gated DeltaNet gate computation (Qwen3NextGatedDeltaNet.forward): from the in_proj_ba outputs "
        f"a and b per value head ({hv}), the log-decay g = -exp(A_log) * softplus(a + dt_bias) in fp32 and the "
        "update rate beta = sigmoid(b) in bf16.",
        {"num_tokens": (None, "tokens (batch x sequence)"), "num_v_heads": (hv, "linear_num_value_heads")},
        {"a": (["num_tokens", "num_v_heads"], "bfloat16", 1.0),
         "b": (["num_tokens", "num_v_heads"], "bfloat16", 1.0),
         "A_log": (["num_v_heads"], "float32", "torch.log(torch.rand(shape, device=device) * 16 + 1e-3)"),
         "dt_bias": (["num_v_heads"], "float32", 0.1, 1.0)},
        {"g": (["num_tokens", "num_v_heads"], "float32"), "beta": (["num_tokens", "num_v_heads"], "bfloat16")},
        body(_GDN_GATING), [{"num_tokens": t} for t in (1, 7, 64, 128, 255, 1024, 2048, 8192)]),
        "L1", "gdn_gating", tokens(TRAIN_TOKENS))


_QWEN_GATED_NORM = '''@torch.no_grad()
def run(hidden_states, gate, weight):
    """Qwen3NextRMSNormGated: RMSNorm per head (eps @EPS@), times weight, then times silu(gate) (norm before gate)."""
    acc = _acc(hidden_states)
    x = hidden_states.to(acc)
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + @EPS@)
    x = weight * x.to(hidden_states.dtype)
    return (x.to(acc) * F.silu(gate.to(acc))).to(hidden_states.dtype)
'''


def qwen_gated_rmsnorm(m) -> ProblemDraft:
    hv, dv, eps = m.config["linear_num_value_heads"], m.config["linear_value_head_dim"], m.config["rms_norm_eps"]
    return _ssm(draft(
        m, f"qwen3-next-80b_gated_rmsnorm_hv{hv}_d{dv}", "gated_rmsnorm",
        f"{m.name} gated DeltaNet output norm (Qwen3NextRMSNormGated): RMSNorm over each value head's {dv} "
        f"channels (eps {eps}), times weight, then times silu(z); {hv} value heads per token. bf16, fp32 inside.",
        {"num_tokens": (None, "tokens (batch x sequence)"), "num_v_heads": (hv, "linear_num_value_heads"),
         "head_v_dim": (dv, "linear_value_head_dim")},
        {"hidden_states": (["num_tokens", "num_v_heads", "head_v_dim"], "bfloat16", 1.0),
         "gate": (["num_tokens", "num_v_heads", "head_v_dim"], "bfloat16", 1.0),
         "weight": (["head_v_dim"], "bfloat16", 0.1, 1.0)},
        {"output": (["num_tokens", "num_v_heads", "head_v_dim"], "bfloat16")},
        body(_QWEN_GATED_NORM.replace("@EPS@", repr(eps))),
        [{"num_tokens": t} for t in (1, 7, 32, 128, 255, 512, 1024, 2048)]),
        "L1", "gated_rmsnorm", tokens(TRAIN_TOKENS))


_GDN_GATING_BWD = '''def run(a, b, A_log, dt_bias, grad_g, grad_beta):
    """Backward of g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b), written out as the fused kernel
    computes it: d softplus = sigmoid, dg/dA_log = g, d sigmoid = beta (1 - beta); parameter grads summed in fp32."""
    acc = _acc(A_log)
    x = a.to(acc) + dt_bias.to(acc)
    decay_rate = -A_log.to(acc).exp()
    g = decay_rate * F.softplus(x)
    gg = grad_g.to(acc)
    grad_a = gg * decay_rate * torch.sigmoid(x)
    beta = torch.sigmoid(b.to(acc))
    grad_b = grad_beta.to(acc) * beta * (1 - beta)
    return grad_a.to(a.dtype), grad_b.to(b.dtype), (gg * g).sum(0), grad_a.sum(0)
'''


def gdn_gating_backward(m) -> ProblemDraft:
    hv = m.config["linear_num_value_heads"]
    return _ssm(draft(
        m, f"qwen3-next-80b_gdn_gating_backward_hv{hv}", "gdn_gating_backward",
        f"Backward of the {m.name} gated DeltaNet gates (g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b), "
        f"{hv} value heads), as in a training step: gradients of a and b (bf16) and of the fp32 parameters A_log and "
        "dt_bias (summed over tokens in fp32), given the gradients of g and beta.",
        {"num_tokens": (None, "tokens in the micro-batch"), "num_v_heads": (hv, "linear_num_value_heads")},
        {"a": (["num_tokens", "num_v_heads"], "bfloat16", 1.0),
         "b": (["num_tokens", "num_v_heads"], "bfloat16", 1.0),
         "A_log": (["num_v_heads"], "float32", "torch.log(torch.rand(shape, device=device) * 16 + 1e-3)"),
         "dt_bias": (["num_v_heads"], "float32", 0.1, 1.0),
         "grad_g": (["num_tokens", "num_v_heads"], "float32", 1.0),
         "grad_beta": (["num_tokens", "num_v_heads"], "bfloat16", 1.0)},
        {"grad_a": (["num_tokens", "num_v_heads"], "bfloat16"), "grad_b": (["num_tokens", "num_v_heads"], "bfloat16"),
         "grad_A_log": (["num_v_heads"], "float32"), "grad_dt_bias": (["num_v_heads"], "float32")},
        body(_GDN_GATING_BWD), [{"num_tokens": t} for t in (1, 7, 64, 128, 255, 1024, 2048, 8192)], backward=True),
        "L1", "gdn_gating_backward", tokens(TRAIN_TOKENS))


_QWEN_GATED_NORM_BWD = '''def run(hidden_states, gate, weight, grad_output):
    """Backward of Qwen3NextRMSNormGated (RMSNorm per head, times weight, times silu(gate)), fp32 sums."""
    acc = _acc(hidden_states)
    with torch.enable_grad():
        h = hidden_states.detach().to(acc).requires_grad_()
        z = gate.detach().to(acc).requires_grad_()
        w = weight.detach().to(acc).requires_grad_()
        x = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + @EPS@)
        out = w * x * F.silu(z)
        gh, gz, gw = torch.autograd.grad(out, (h, z, w), grad_output.to(acc))
    return gh.to(hidden_states.dtype), gz.to(gate.dtype), gw.to(weight.dtype)
'''


def qwen_gated_rmsnorm_backward(m) -> ProblemDraft:
    hv, dv, eps = m.config["linear_num_value_heads"], m.config["linear_value_head_dim"], m.config["rms_norm_eps"]
    return _ssm(draft(
        m, f"qwen3-next-80b_gated_rmsnorm_backward_hv{hv}_d{dv}", "gated_rmsnorm_backward",
        f"Backward of the {m.name} gated DeltaNet output norm (Qwen3NextRMSNormGated: RMSNorm over each of {hv} "
        f"value heads' {dv} channels, eps {eps}, times weight, times silu(z)): gradients of the input and z (bf16) "
        "and of the fp32 weight (summed over tokens and heads in fp32), given grad_output.",
        {"num_tokens": (None, "tokens in the micro-batch"), "num_v_heads": (hv, "linear_num_value_heads"),
         "head_v_dim": (dv, "linear_value_head_dim")},
        {"hidden_states": (["num_tokens", "num_v_heads", "head_v_dim"], "bfloat16", 1.0),
         "gate": (["num_tokens", "num_v_heads", "head_v_dim"], "bfloat16", 1.0),
         "weight": (["head_v_dim"], "float32", 0.1, 1.0),
         "grad_output": (["num_tokens", "num_v_heads", "head_v_dim"], "bfloat16", 1.0)},
        {"grad_hidden_states": (["num_tokens", "num_v_heads", "head_v_dim"], "bfloat16"),
         "grad_gate": (["num_tokens", "num_v_heads", "head_v_dim"], "bfloat16"),
         "grad_weight": (["head_v_dim"], "float32")},
        body(_QWEN_GATED_NORM_BWD.replace("@EPS@", repr(eps))),
        [{"num_tokens": t} for t in (1, 7, 32, 128, 255, 512, 1024, 2048)], backward=True),
        "L1", "gated_rmsnorm_backward", tokens(TRAIN_TOKENS))


# ================================ RWKV-7 ===============================================================

_WKV7 = '''@torch.no_grad()
def run(r, w, k, v, kk, a, state):
    """RWKV-7 time-mixing recurrence per head (BlinkDL RWKV-v7 reference):

    S_t = S_(t-1) * w_t^T - (S_(t-1) kk_t) (kk_t * a_t)^T + v_t k_t^T,  y_t = S_t r_t.
    r, w (decay in (0, 1)), k, v, kk (L2-normalised), a (in-context rate): [b, t, h, n]; state [b, h, n, n] (v x k).
    """
    acc = _acc(state)
    r, w, k, v, kk, a = (x.to(acc) for x in (r, w, k, v, kk, a))
    s = state.to(acc)
    ys = []
    for t in range(r.shape[1]):
        s = s * w[:, t, :, None, :] - (s @ kk[:, t, :, :, None]) * (kk[:, t] * a[:, t])[:, :, None, :] \\
            + v[:, t, :, :, None] * k[:, t, :, None, :]
        ys.append((s @ r[:, t, :, :, None])[..., 0])
    return torch.stack(ys, dim=1).to(state.dtype), s.to(state.dtype)
'''


def wkv7(m) -> ProblemDraft:
    heads, n = m.config["derived.num_heads"], m.config["head_dim"]
    return _ssm(draft(
        m, f"rwkv7-15b_wkv7_h{heads}_n{n}", "wkv7",
        f"{m.name} WKV-7 state recurrence (RWKV-7 'Goose' time mixing, BlinkDL/RWKV-LM RWKV-v7 reference): "
        "per head a [n x n] state (value x key) is decayed channel-wise by w, corrected by the delta-rule term "
        "-(S kk)(kk * a)^T, written with v k^T and read with r; "
        f"{heads} heads of head_dim {n} (hidden_size / head_dim). fp32 throughout (the published checkpoint is fp32).",
        {"batch_size": None, "seq_len": None, "num_heads": (heads, "hidden_size / head_dim"), "head_dim": (n, "head_dim")},
        {"r": (["batch_size", "seq_len", "num_heads", "head_dim"], "float32", 0.5),
         "w": (["batch_size", "seq_len", "num_heads", "head_dim"], "float32",
               "torch.exp(-torch.sigmoid(torch.randn(shape, device=device)) / math.e ** 0.5)"),
         "k": (["batch_size", "seq_len", "num_heads", "head_dim"], "float32", 0.5),
         "v": (["batch_size", "seq_len", "num_heads", "head_dim"], "float32", 1.0),
         "kk": (["batch_size", "seq_len", "num_heads", "head_dim"], "float32",
                "F.normalize(torch.randn(shape, device=device), dim=-1)"),
         "a": (["batch_size", "seq_len", "num_heads", "head_dim"], "float32", _UNIT),
         "state": (["batch_size", "num_heads", "head_dim", "head_dim"], "float32", 0.5)},
        {"y": (["batch_size", "seq_len", "num_heads", "head_dim"], "float32"),
         "final_state": (["batch_size", "num_heads", "head_dim", "head_dim"], "float32")},
        body(_WKV7), grid(batch_size=(1, 1, 2, 1, 1, 2, 4, 1), seq_len=(1, 16, 32, 64, 100, 64, 16, 128))),
        "L1", "wkv7", _seqs(STEP_SEQUENCES))


_RWKV7_DECAY = '''@torch.no_grad()
def run(xw, w1, w2, w0):
    """RWKV-7 data-dependent decay: w = exp(-sigmoid(tanh(xw @ w1) @ w2 + w0) / sqrt(e)) (fp32)."""
    acc = _acc(w0)
    lora = torch.tanh(xw.to(acc) @ w1.to(acc)) @ w2.to(acc)
    return torch.exp(-torch.sigmoid(lora + w0.to(acc)) / math.e ** 0.5)
'''


def rwkv7_time_decay(m) -> ProblemDraft:
    hidden, rank = m.config["hidden_size"], m.config["decay_low_rank_dim"]
    return _ssm(draft(
        m, f"rwkv7-15b_time_decay_h{hidden}_r{rank}", "rwkv7_time_decay",
        f"{m.name} data-dependent time decay (RWKV-v7 reference time mixing): a rank-{rank} LoRA "
        f"tanh(xw W1) W2 plus the bias w0, squashed to a per-channel decay exp(-sigmoid(.) / sqrt(e)) in "
        f"(0.545, 1) over hidden_size {hidden}; fp32 (the published checkpoint's dtype).",
        {"num_tokens": (None, "tokens (batch x sequence)"), "hidden_size": (hidden, "hidden_size"),
         "rank": (rank, "decay_low_rank_dim")},
        {"xw": (["num_tokens", "hidden_size"], "float32", 1.0),
         "w1": (["hidden_size", "rank"], "float32", hidden ** -0.5),
         "w2": (["rank", "hidden_size"], "float32", rank ** -0.5),
         "w0": (["hidden_size"], "float32", 1.0, -0.5)},
        {"decay": (["num_tokens", "hidden_size"], "float32")},
        body(_RWKV7_DECAY), [{"num_tokens": t} for t in (1, 7, 64, 128, 255, 512, 1024, 2048)]),
        "L1", "rwkv7_decay", tokens(TRAIN_TOKENS))


_RWKV7_DECAY_BWD = '''def run(xw, w1, w2, w0, grad_decay):
    """Backward of decay = exp(-sigmoid(tanh(xw @ w1) @ w2 + w0) / sqrt(e)), written out (fp32):
    gradients of the input and of the LoRA and bias parameters (summed over tokens)."""
    acc = _acc(w0)
    x, a, b = xw.to(acc), w1.to(acc), w2.to(acc)
    h = torch.tanh(x @ a)
    s = torch.sigmoid(h @ b + w0.to(acc))
    decay = torch.exp(-s / math.e ** 0.5)
    gz = grad_decay.to(acc) * (-decay / math.e ** 0.5) * s * (1 - s)
    gpre = (gz @ b.T) * (1 - h * h)
    return gpre @ a.T, x.T @ gpre, h.T @ gz, gz.sum(0)
'''


def rwkv7_time_decay_backward(m) -> ProblemDraft:
    hidden, rank = m.config["hidden_size"], m.config["decay_low_rank_dim"]
    return _ssm(draft(
        m, f"rwkv7-15b_time_decay_backward_h{hidden}_r{rank}", "rwkv7_time_decay_backward",
        f"Backward of the {m.name} data-dependent decay (exp(-sigmoid(tanh(xw W1) W2 + w0) / sqrt(e)), rank-{rank} "
        f"LoRA over hidden_size {hidden}), as in a training step: gradients of xw, W1, W2 and w0 given the "
        "decay's gradient; fp32, parameter gradients summed over tokens.",
        {"num_tokens": (None, "tokens in the micro-batch"), "hidden_size": (hidden, "hidden_size"),
         "rank": (rank, "decay_low_rank_dim")},
        {"xw": (["num_tokens", "hidden_size"], "float32", 1.0),
         "w1": (["hidden_size", "rank"], "float32", hidden ** -0.5),
         "w2": (["rank", "hidden_size"], "float32", rank ** -0.5),
         "w0": (["hidden_size"], "float32", 1.0, -0.5),
         "grad_decay": (["num_tokens", "hidden_size"], "float32", 1.0)},
        {"grad_xw": (["num_tokens", "hidden_size"], "float32"), "grad_w1": (["hidden_size", "rank"], "float32"),
         "grad_w2": (["rank", "hidden_size"], "float32"), "grad_w0": (["hidden_size"], "float32")},
        body(_RWKV7_DECAY_BWD), [{"num_tokens": t} for t in (1, 7, 64, 128, 255, 512, 1000, 2047)], backward=True),
        "L1", "rwkv7_decay_backward", tokens(TRAIN_TOKENS))


# ================================ Quant: FP8 Mamba2 projections ========================================

def fp8_mamba2_projections(m) -> list[ProblemDraft]:
    """The Mamba2 mixer's in_proj and out_proj as FP8 per-tensor GEMMs (quant.py's recipe, Nemotron-3-Nano dims)."""
    from suite_recipes.quant import fp8_per_tensor_gemm

    hidden, heads, p = m.config["hidden_size"], m.config["mamba_num_heads"], m.config["mamba_head_dim"]
    g, n = m.config["n_groups"], m.config["ssm_state_size"]
    d_inner = heads * p
    in_out = 2 * d_inner + 2 * g * n + heads
    sweep = (1, 2, 8, 16, 64, 128, 255, 512)
    in_proj = fp8_per_tensor_gemm(
        m, f"nemotron-3-nano_fp8_mamba2_in_proj_n{in_out}", hidden, in_out,
        f"Mamba2 mixer in_proj: hidden_size {hidden} -> z, xBC and dt = 2 x {d_inner} (mamba_num_heads x "
        f"mamba_head_dim) + 2 x n_groups {g} x ssm_state_size {n} + {heads} heads = {in_out}", sweep)
    out_proj = fp8_per_tensor_gemm(
        m, f"nemotron-3-nano_fp8_mamba2_out_proj_k{d_inner}", d_inner, hidden,
        f"Mamba2 mixer out_proj: the gated-norm output {d_inner} (mamba_num_heads x mamba_head_dim) -> "
        f"hidden_size {hidden}", sweep)
    return [_ssm(d, "Quant", "mamba2_projection", tokens(GEMM_TOKENS)) for d in (in_proj, out_proj)]


# ================================ the set ==============================================================

def drafts() -> list[ProblemDraft]:
    nemotron_d = NEMOTRON_H_56B.config["mamba_num_heads"] * NEMOTRON_H_56B.config["mamba_head_dim"]
    nemotron_conv = nemotron_d + 2 * NEMOTRON_H_56B.config["n_groups"] * NEMOTRON_H_56B.config["ssm_state_size"]
    qwen_conv = 2 * QWEN3_NEXT.config["linear_num_key_heads"] * QWEN3_NEXT.config["linear_key_head_dim"] \
        + QWEN3_NEXT.config["linear_num_value_heads"] * QWEN3_NEXT.config["linear_value_head_dim"]
    return [
        mamba2_segsum(MAMBA2_27B),
        mamba2_chunk_diag(NEMOTRON_NANO),
        mamba2_chunk_state(MAMBA2_27B),
        mamba2_state_passing(NEMOTRON_NANO),
        mamba2_chunk_scan(MAMBA2_27B, "mamba2-27b_ssd_chunk_scan_h80_n128"),
        mamba2_chunk_scan(NEMOTRON_H_56B, "nemotron-h-56b_ssd_chunk_scan_h32_n256_tp8", tp=8),
        mamba2_mixer_scan(NEMOTRON_NANO),
        mamba2_state_update(NEMOTRON_NANO),
        causal_conv1d(NEMOTRON_H_56B, f"nemotron-h-56b_causal_conv1d_silu_c{nemotron_conv}", nemotron_conv,
                      NEMOTRON_H_56B.config["conv_kernel"],
                      "mamba_num_heads * mamba_head_dim + 2 * n_groups * ssm_state_size", bias=True),
        causal_conv1d(QWEN3_NEXT, f"qwen3-next-80b_causal_conv1d_silu_c{qwen_conv}", qwen_conv,
                      QWEN3_NEXT.config["linear_conv_kernel_dim"],
                      "2 * linear_num_key_heads * linear_key_head_dim + linear_num_value_heads * linear_value_head_dim",
                      bias=False),
        causal_conv1d_update(MAMBA2_27B),
        causal_conv1d_backward(MAMBA2_27B),
        dt_softplus(NEMOTRON_H_56B),
        dt_softplus_backward(MAMBA2_27B),
        mamba_gated_rmsnorm(NEMOTRON_H_56B, "nemotron-h-56b_gated_rmsnorm_h2048_tp8", tp=8),
        mamba_gated_rmsnorm_backward(NEMOTRON_NANO),
        selective_scan(JAMBA),
        selective_state_update(JAMBA),
        jamba_ssm_block(JAMBA),
        gated_delta_rule_chunked(QWEN3_NEXT),
        gated_delta_rule_recurrent(QWEN3_NEXT),
        gdn_gating(QWEN3_NEXT),
        gdn_gating_backward(QWEN3_NEXT),
        qwen_gated_rmsnorm(QWEN3_NEXT),
        qwen_gated_rmsnorm_backward(QWEN3_NEXT),
        wkv7(RWKV7),
        rwkv7_time_decay(RWKV7),
        rwkv7_time_decay_backward(RWKV7),
        *fp8_mamba2_projections(NEMOTRON_NANO),
    ]
