import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["batch_size"], a["seq_len"], a["hidden_size"], device=device)).to(torch.float32),
        "q_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.03608439182435161).to(torch.float32),
        "q_proj_bias": (0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.float32),
        "k_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.03608439182435161).to(torch.float32),
        "v_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.03608439182435161).to(torch.float32),
        "v_proj_bias": (0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.float32),
        "o_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.03608439182435161).to(torch.float32),
        "grad_output": (torch.randn(a["batch_size"], a["seq_len"], a["hidden_size"], device=device)).to(torch.float32),
    }


def _forward(hidden_states, q_proj_weight, q_proj_bias, k_proj_weight, k_proj_bias, v_proj_weight, v_proj_bias, o_proj_weight, o_proj_bias):
    sym_size_int_3 = hidden_states.shape[0]
    sym_size_int_4 = hidden_states.shape[1]
    linear = torch.ops.aten.linear.default(hidden_states, q_proj_weight, q_proj_bias)
    view = torch.ops.aten.view.default(linear, [sym_size_int_3, sym_size_int_4, -1, 64])
    transpose = torch.ops.aten.transpose.int(view, 1, 2)
    linear_1 = torch.ops.aten.linear.default(hidden_states, k_proj_weight, k_proj_bias)
    view_1 = torch.ops.aten.view.default(linear_1, [sym_size_int_3, sym_size_int_4, -1, 64])
    transpose_1 = torch.ops.aten.transpose.int(view_1, 1, 2)
    linear_2 = torch.ops.aten.linear.default(hidden_states, v_proj_weight, v_proj_bias)
    view_2 = torch.ops.aten.view.default(linear_2, [sym_size_int_3, sym_size_int_4, -1, 64])
    transpose_2 = torch.ops.aten.transpose.int(view_2, 1, 2)
    scaled_dot_product_attention = torch.ops.aten.scaled_dot_product_attention.default(transpose, transpose_1, transpose_2, scale=0.125)
    reshape = torch.ops.aten.reshape.default(scaled_dot_product_attention, [sym_size_int_3, -1, sym_size_int_4, 64])
    transpose_3 = torch.ops.aten.transpose.int(reshape, 1, 2)
    reshape_1 = torch.ops.aten.reshape.default(transpose_3, [sym_size_int_3, sym_size_int_4, -1])
    linear_3 = torch.ops.aten.linear.default(reshape_1, o_proj_weight, o_proj_bias)
    return linear_3


def run(hidden_states, q_proj_weight, q_proj_bias, k_proj_weight, v_proj_weight, v_proj_bias, o_proj_weight, grad_output):
    k_proj_bias = torch.zeros((768,), dtype=hidden_states.dtype, device=hidden_states.device)  # no gradient depends on it
    o_proj_bias = torch.zeros((768,), dtype=hidden_states.dtype, device=hidden_states.device)  # no gradient depends on it
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (hidden_states, q_proj_weight, q_proj_bias, k_proj_weight, k_proj_bias, v_proj_weight, v_proj_bias, o_proj_weight, o_proj_bias,)]
        output = _forward(*leaves)
        wanted = [leaves[i] for i in [0, 1, 2, 3, 5, 6, 7, 8]]  # the others' gradients are zero
        return tuple(torch.autograd.grad(output, wanted, grad_output))
