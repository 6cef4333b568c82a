import torch


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["batch_size"], a["seq_len"], a["d_model"], device=device)).to(torch.bfloat16),
        "self_attn_k_proj_weight": (torch.randn(a["d_model"], a["d_model"], device=device) * 0.02795084971874737).to(torch.bfloat16),
        "self_attn_v_proj_weight": (torch.randn(a["d_model"], a["d_model"], device=device) * 0.02795084971874737).to(torch.bfloat16),
        "self_attn_v_proj_bias": (0.1 * torch.randn(a["d_model"], device=device)).to(torch.bfloat16),
        "self_attn_q_proj_weight": (torch.randn(a["d_model"], a["d_model"], device=device) * 0.02795084971874737).to(torch.bfloat16),
        "self_attn_q_proj_bias": (0.1 * torch.randn(a["d_model"], device=device)).to(torch.bfloat16),
        "self_attn_out_proj_weight": (torch.randn(a["d_model"], a["d_model"], device=device) * 0.02795084971874737).to(torch.bfloat16),
        "self_attn_out_proj_bias": (0.1 * torch.randn(a["d_model"], device=device)).to(torch.bfloat16),
        "self_attn_layer_norm_weight": (1.0 + 0.1 * torch.randn(a["d_model"], device=device)).to(torch.bfloat16),
        "self_attn_layer_norm_bias": (0.1 * torch.randn(a["d_model"], device=device)).to(torch.bfloat16),
        "fc1_weight": (torch.randn(a["encoder_ffn_dim"], a["d_model"], device=device) * 0.02795084971874737).to(torch.bfloat16),
        "fc1_bias": (0.1 * torch.randn(a["encoder_ffn_dim"], device=device)).to(torch.bfloat16),
        "fc2_weight": (torch.randn(a["d_model"], a["encoder_ffn_dim"], device=device) * 0.013975424859373685).to(torch.bfloat16),
        "fc2_bias": (0.1 * torch.randn(a["d_model"], device=device)).to(torch.bfloat16),
        "final_layer_norm_weight": (1.0 + 0.1 * torch.randn(a["d_model"], device=device)).to(torch.bfloat16),
        "final_layer_norm_bias": (0.1 * torch.randn(a["d_model"], device=device)).to(torch.bfloat16),
    }


@torch.no_grad()
def run(hidden_states, self_attn_k_proj_weight, self_attn_v_proj_weight, self_attn_v_proj_bias, self_attn_q_proj_weight, self_attn_q_proj_bias, self_attn_out_proj_weight, self_attn_out_proj_bias, self_attn_layer_norm_weight, self_attn_layer_norm_bias, fc1_weight, fc1_bias, fc2_weight, fc2_bias, final_layer_norm_weight, final_layer_norm_bias):
    sym_size_int_3 = hidden_states.shape[0]
    sym_size_int_4 = hidden_states.shape[1]
    layer_norm = torch.ops.aten.layer_norm.default(hidden_states, [1280], self_attn_layer_norm_weight, self_attn_layer_norm_bias, 1e-05, False)
    linear = torch.ops.aten.linear.default(layer_norm, self_attn_q_proj_weight, self_attn_q_proj_bias)
    mul = torch.ops.aten.mul.Tensor(linear, 0.125)
    view = torch.ops.aten.view.default(mul, [sym_size_int_3, sym_size_int_4, -1, 64])
    transpose = torch.ops.aten.transpose.int(view, 1, 2)
    contiguous = torch.ops.aten.contiguous.default(transpose)
    linear_1 = torch.ops.aten.linear.default(layer_norm, self_attn_k_proj_weight)
    view_1 = torch.ops.aten.view.default(linear_1, [sym_size_int_3, -1, 20, 64])
    transpose_1 = torch.ops.aten.transpose.int(view_1, 1, 2)
    contiguous_1 = torch.ops.aten.contiguous.default(transpose_1)
    linear_2 = torch.ops.aten.linear.default(layer_norm, self_attn_v_proj_weight, self_attn_v_proj_bias)
    view_2 = torch.ops.aten.view.default(linear_2, [sym_size_int_3, -1, 20, 64])
    transpose_2 = torch.ops.aten.transpose.int(view_2, 1, 2)
    contiguous_2 = torch.ops.aten.contiguous.default(transpose_2)
    scaled_dot_product_attention = torch.ops.aten.scaled_dot_product_attention.default(contiguous, contiguous_1, contiguous_2, scale=1.0)
    reshape = torch.ops.aten.reshape.default(scaled_dot_product_attention, [sym_size_int_3, -1, sym_size_int_4, 64])
    transpose_3 = torch.ops.aten.transpose.int(reshape, 1, 2)
    contiguous_3 = torch.ops.aten.contiguous.default(transpose_3)
    reshape_1 = torch.ops.aten.reshape.default(contiguous_3, [sym_size_int_3, sym_size_int_4, -1])
    linear_3 = torch.ops.aten.linear.default(reshape_1, self_attn_out_proj_weight, self_attn_out_proj_bias)
    dropout = torch.ops.aten.dropout.default(linear_3, 0.0, False)
    add = torch.ops.aten.add.Tensor(hidden_states, dropout)
    layer_norm_1 = torch.ops.aten.layer_norm.default(add, [1280], final_layer_norm_weight, final_layer_norm_bias, 1e-05, False)
    linear_4 = torch.ops.aten.linear.default(layer_norm_1, fc1_weight, fc1_bias)
    gelu = torch.ops.aten.gelu.default(linear_4)
    dropout_1 = torch.ops.aten.dropout.default(gelu, 0.0, False)
    linear_5 = torch.ops.aten.linear.default(dropout_1, fc2_weight, fc2_bias)
    dropout_2 = torch.ops.aten.dropout.default(linear_5, 0.0, False)
    add_1 = torch.ops.aten.add.Tensor(add, dropout_2)
    return add_1
