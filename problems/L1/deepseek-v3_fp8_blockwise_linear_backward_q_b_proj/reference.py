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
    t, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]
    go = torch.randn(t, n, device=device)
    x = torch.randn(t, k, device=device)
    grad_output, grad_output_scale = _group_quant_fp8(go, 128)          # 1x128 along N, for dgrad
    grad_output_t, grad_output_t_scale = _group_quant_fp8(go.T, 128)    # 1x128 along tokens, for wgrad
    x_t, x_t_scale = _group_quant_fp8(x.T, 128)
    weight, weight_scale = _block_quant_fp8(torch.randn(n, k, device=device) * k ** -0.5, 128)
    return {"grad_output": grad_output, "grad_output_scale": grad_output_scale,
            "grad_output_t": grad_output_t, "grad_output_t_scale": grad_output_t_scale,
            "x_t": x_t, "x_t_scale": x_t_scale, "weight": weight, "weight_scale": weight_scale}


def run(grad_output, grad_output_scale, grad_output_t, grad_output_t_scale, x_t, x_t_scale, weight, weight_scale):
    grad_input = _dequant_groups(grad_output, grad_output_scale) @ _dequant_blocks(weight, weight_scale)
    grad_weight = _dequant_groups(grad_output_t, grad_output_t_scale) @ _dequant_groups(x_t, x_t_scale).T
    return grad_input.to(torch.bfloat16), grad_weight
