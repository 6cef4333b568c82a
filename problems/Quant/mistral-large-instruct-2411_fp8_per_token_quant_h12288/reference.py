import torch


def make_inputs(axes_and_scalars, device):
    t, h = axes_and_scalars["num_tokens"], axes_and_scalars["hidden_size"]
    return {"hidden_states": torch.randn(t, h, device=device).to(torch.bfloat16)}


@torch.no_grad()
def run(hidden_states):
    x = hidden_states.to(torch.float32)
    scale = (x.abs().amax(dim=-1, keepdim=True) / 448.0).clamp_min(1.0 / (448.0 * 512.0))
    q = (x / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q, scale
