import torch

TOP_K, N_GROUP, TOPK_GROUP, BLOCK = 8, 8, 4, 128


def _fp8_codes(shape, device):
    """Random e4m3 values without NaN: sign and magnitude codes 0x28..0x4f (0.25 .. 7.5)."""
    codes = torch.randint(0x28, 0x50, shape, dtype=torch.uint8, device=device)
    signs = torch.randint(0, 2, shape, dtype=torch.uint8, device=device) << 7
    return (codes | signs).view(torch.float8_e4m3fn)


def make_inputs(axes, device):
    t, e, local = axes["seq_len"], axes["num_experts"], axes["num_local_experts"]
    h, i = axes["hidden_size"], axes["intermediate_size"]
    # Tie-free routing: a random preference order per token (this rank's experts 4x likelier near the top),
    # scores on a ladder by rank (below), plus a per-group offset (multiples of 6e-5) that separates group sums.
    # The groups routing keeps are chosen first (this rank's group and TOPK_GROUP - 1 others): every expert of a
    # dropped group ranks below every expert of a kept one, so the top-k cut is the ladder's cut.
    size = e // N_GROUP
    key = torch.rand(t, e, device=device)
    key[:, :local] *= 0.25
    dropped = torch.zeros(t, N_GROUP, dtype=torch.bool, device=device)
    others = torch.rand(t, N_GROUP - 1, device=device).argsort(dim=1)[:, :N_GROUP - TOPK_GROUP] + 1
    dropped.scatter_(1, others, True)
    key = key + 10.0 * dropped.repeat_interleave(size, dim=1)
    # one of this rank's experts and another of its group lead the order (that group is kept, the rank is busy)
    rows = torch.arange(t, device=device)
    hot = torch.randint(0, local, (t,), device=device)
    partner = (hot // size) * size + (hot % size + 1 + torch.randint(0, size - 1, (t,), device=device)) % size
    key[rows, hot] = -2.0
    key[rows, partner] = -1.0
    rank = torch.argsort(torch.argsort(key, dim=1), dim=1)
    # the local expert moves to a random place among the top-k (so its weight, and the output, follow the logits),
    # for a third of the tokens the last place, for a third the first place below the cut (the bias decides them)
    u = torch.rand(t, device=device)
    moved = torch.where(u < 1 / 3, TOP_K, torch.where(u < 2 / 3, TOP_K - 1, torch.randint(0, TOP_K, (t,), device=device)))
    holder = (rank == moved[:, None]).to(torch.int64).argmax(dim=1)
    rank[rows, holder] = rank[rows, hot]
    rank[rows, hot] = moved
    rank = rank.to(torch.float32)
    group_rank = torch.argsort(torch.rand(t, N_GROUP, device=device), dim=1).to(torch.float32)
    # selection scores by rank, all multiples of 1e-3: 0.08 apart within the top-k (so the weights differ), 0.002
    # across the cut (a redrawn routing_bias moves some tokens' last choice out), 1e-3 apart below; group
    # offsets of 6e-5 per group rank keep every group sum at least 1.2e-4 from another
    ladder = torch.where(rank < TOP_K, 0.9 - 0.08 * rank, 0.338 - 1e-3 * (rank - TOP_K))
    choice = ladder + 6e-5 * group_rank.repeat_interleave(e // N_GROUP, dim=1)
    bias = (0.01 * torch.randn(e, device=device)).to(torch.bfloat16)
    s = choice - bias.to(torch.float32)
    logits = torch.log(s / (1.0 - s))
    return {"routing_logits": logits, "routing_bias": bias,
            "hidden_states": _fp8_codes((t, h), device),
            "hidden_states_scale": (0.3 + 0.1 * torch.rand(h // BLOCK, t, device=device)),
            "gemm1_weights": _fp8_codes((local, 2 * i, h), device),
            "gemm1_weights_scale": (0.3 + 0.1 * torch.rand(local, 2 * i // BLOCK, h // BLOCK, device=device)) * h ** -0.5,
            "gemm2_weights": _fp8_codes((local, h, i), device),
            "gemm2_weights_scale": (0.3 + 0.1 * torch.rand(local, h // BLOCK, i // BLOCK, device=device)) * i ** -0.5}


def _blocks(w, scale):
    """e4m3 [E, N, K] with 128x128-block scales [E, N/128, K/128] -> fp32."""
    e, n, k = w.shape
    values = w.to(torch.float32).reshape(e, n // BLOCK, BLOCK, k // BLOCK, BLOCK) * scale.to(torch.float32)[:, :, None, :, None]
    return values.reshape(e, n, k)


@torch.no_grad()
def run(routing_logits, routing_bias, hidden_states, hidden_states_scale, gemm1_weights, gemm1_weights_scale,
        gemm2_weights, gemm2_weights_scale, local_expert_offset, routed_scaling_factor):
    t, h = hidden_states.shape
    local, two_i, _ = gemm1_weights.shape
    i = two_i // 2
    e = routing_logits.shape[1]
    # hidden states: e4m3 with 1x128 block scales stored [H/128, T]
    a = (hidden_states.to(torch.float32).reshape(t, h // BLOCK, BLOCK)
         * hidden_states_scale.to(torch.float32).T[:, :, None]).reshape(t, h)
    # DeepSeek-V3 noaux_tc routing
    s = torch.sigmoid(routing_logits.to(torch.float32))
    biased = s + routing_bias.to(torch.float32)
    group_scores = torch.topk(biased.view(t, N_GROUP, e // N_GROUP), k=2, dim=2).values.sum(dim=2)
    group_idx = torch.topk(group_scores, k=TOPK_GROUP, dim=1).indices
    group_mask = torch.zeros_like(group_scores).scatter_(1, group_idx, 1.0)
    keep = group_mask.repeat_interleave(e // N_GROUP, dim=1) > 0
    topk_idx = torch.topk(biased.masked_fill(~keep, float("-inf")), k=TOP_K, dim=1).indices
    weights = torch.gather(s, 1, topk_idx)
    weights = weights / weights.sum(dim=1, keepdim=True) * routed_scaling_factor
    # this rank's experts
    start = int(local_expert_offset)
    token, slot = torch.nonzero((topk_idx >= start) & (topk_idx < start + local), as_tuple=True)
    expert = topk_idx[token, slot] - start
    w13 = _blocks(gemm1_weights, gemm1_weights_scale)
    w2 = _blocks(gemm2_weights, gemm2_weights_scale)
    output = torch.zeros(t, h, dtype=torch.float32, device=hidden_states.device)
    for le in range(local):
        rows = torch.nonzero(expert == le).flatten()
        if rows.numel() == 0:
            continue
        g1 = a[token[rows]] @ w13[le].T                       # [rows, 2I]: [up | gate], as trtllm orders W13
        c = torch.nn.functional.silu(g1[:, i:]) * g1[:, :i]
        o = c @ w2[le].T
        output.index_add_(0, token[rows], o * weights[token[rows], slot[rows]].unsqueeze(1))
    return output.to(torch.bfloat16)
