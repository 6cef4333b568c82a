import torch


def _group_quant_fp8(x, group):
    """Per-group dynamic e4m3 quantization along the last dim: scale = max(amax, 1e-10) / 448."""
    shape = x.shape
    xg = x.to(torch.float32).reshape(*shape[:-1], shape[-1] // group, group)
    scale = xg.abs().amax(dim=-1).clamp_min(1e-10) / 448.0
    q = (xg / scale.unsqueeze(-1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.reshape(shape), scale


def _block_quant_fp8(w, block=128):
    """128x128-block e4m3 weight quantization (DeepSeek-V3 checkpoints): w [..., N, K] -> codes, scales [..., N/128, K/128]."""
    *lead, n, k = w.shape
    wb = w.to(torch.float32).reshape(*lead, n // block, block, k // block, block)
    scale = wb.abs().amax(dim=(-3, -1)).clamp_min(1e-10) / 448.0
    q = (wb / scale[..., :, None, :, None]).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.reshape(w.shape), scale


def _dequant_groups(q, scale, group=128):
    """e4m3 codes [..., K] with fp32 scales [..., K/group] -> values (in the scales' precision)."""
    shape = q.shape
    values = q.to(torch.float32).reshape(*shape[:-1], shape[-1] // group, group) * scale.unsqueeze(-1)
    return values.reshape(shape)


def _dequant_blocks(q, scale, block=128):
    """e4m3 codes [..., N, K] with scales [..., N/128, K/128] -> values."""
    *lead, n, k = q.shape
    values = q.to(torch.float32).reshape(*lead, n // block, block, k // block, block) \
        * scale[..., :, None, :, None]
    return values.reshape(q.shape)


def make_inputs(axes_and_scalars, device):
    m, k, n = axes_and_scalars["num_rows"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    e = axes_and_scalars["num_local_experts"]
    a, a_scale = _group_quant_fp8(torch.randn(m, k, device=device), 128)
    w, w_scale = _block_quant_fp8(torch.randn(e, n, k, device=device) * k ** -0.5, 128)
    # Routed rows per expert: a random split of num_rows (some experts may get none).
    cuts = torch.sort(torch.randint(0, m + 1, (e - 1,), device=device)).values
    zero = torch.zeros(1, dtype=torch.int64, device=device)
    total = torch.full((1,), m, dtype=torch.int64, device=device)
    expert_offsets = torch.cat([zero, cuts, total]).to(torch.int32)
    return {"a": a, "a_scale": a_scale, "w": w, "w_scale": w_scale, "expert_offsets": expert_offsets}


@torch.no_grad()
def run(a, a_scale, w, w_scale, expert_offsets):
    bounds = expert_offsets.tolist()
    a_values = _dequant_groups(a, a_scale)
    outs = []
    for e in range(w.shape[0]):
        start, end = bounds[e], bounds[e + 1]
        if end > start:
            outs.append(a_values[start:end] @ _dequant_blocks(w[e], w_scale[e]).T)
    return torch.cat(outs, dim=0).to(torch.bfloat16)
