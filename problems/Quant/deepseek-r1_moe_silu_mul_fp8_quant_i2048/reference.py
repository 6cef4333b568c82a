import torch


def _group_quant_fp8(x, group):
    """Per-group dynamic e4m3 quantization along the last dim: scale = max(amax, 1e-10) / 448."""
    shape = x.shape
    xg = x.to(torch.float32).reshape(*shape[:-1], shape[-1] // group, group)
    scale = xg.abs().amax(dim=-1).clamp_min(1e-10) / 448.0
    q = (xg / scale.unsqueeze(-1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.reshape(shape), scale


def make_inputs(axes_and_scalars, device):
    t, i = axes_and_scalars["num_tokens"], axes_and_scalars["moe_intermediate_size"]
    return {"gate_up": torch.randn(t, 2 * i, device=device).to(torch.bfloat16)}


@torch.no_grad()
def run(gate_up):
    i = gate_up.shape[-1] // 2
    g = gate_up[..., :i].to(torch.float32)
    u = gate_up[..., i:].to(torch.float32)
    h = (g * torch.sigmoid(g) * u).to(gate_up.dtype)
    return _group_quant_fp8(h, 128)
