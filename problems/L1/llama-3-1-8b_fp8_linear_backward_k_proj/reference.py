import torch


def make_inputs(axes_and_scalars, device):
    t, k, n = axes_and_scalars["num_tokens"], axes_and_scalars["in_features"], axes_and_scalars["out_features"]

    def cast(x, fp8_max, dtype):
        scale_inv = (x.abs().amax() / fp8_max).reshape(1)  # delayed scaling: amax of a recent step
        scale_inv = scale_inv * (1.0 + 0.5 * torch.rand(1, device=device))
        return (x / scale_inv).clamp(-fp8_max, fp8_max).to(dtype), scale_inv

    go, go_s = cast(torch.randn(t, n, device=device), 57344.0, torch.float8_e5m2)
    x, x_s = cast(torch.randn(t, k, device=device), 448.0, torch.float8_e4m3fn)
    w, w_s = cast(torch.randn(n, k, device=device) * k ** -0.5, 448.0, torch.float8_e4m3fn)
    return {"grad_output": go, "grad_output_scale_inv": go_s, "x": x, "x_scale_inv": x_s,
            "weight": w, "weight_scale_inv": w_s}


def run(grad_output, grad_output_scale_inv, x, x_scale_inv, weight, weight_scale_inv):
    go = grad_output.to(torch.float32) * grad_output_scale_inv
    grad_input = go @ (weight.to(torch.float32) * weight_scale_inv)
    grad_weight = go.T @ (x.to(torch.float32) * x_scale_inv)
    return grad_input.to(torch.bfloat16), grad_weight
