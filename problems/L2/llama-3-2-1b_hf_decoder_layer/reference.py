import torch

_ROTARY_INV_FREQ = [1.0, 0.663601279258728, 0.44036662578582764, 0.2922278344631195, 0.193922758102417, 0.12868738174438477, 0.08539710193872452, 0.05666961893439293, 0.03760603070259094, 0.02495540864765644, 0.016560440883040428, 0.010989529080688953, 0.00729266507551074, 0.00483942124992609, 0.0032114461064338684, 0.0012905480107292533, 0.000429556705057621, 9.708286233944818e-05, 1.9461638657958247e-05, 1.291476746700937e-05, 8.570255886297673e-06, 5.687232260243036e-06, 3.7740544485131977e-06, 2.504467147446121e-06, 1.6619674170215148e-06, 1.1028836297555245e-06, 7.318749339901842e-07, 4.856731266045244e-07, 3.2229328894572973e-07, 2.1387423032592778e-07, 1.4192720243499934e-07, 9.418306490260875e-08]


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["batch_size"], a["seq_len"], a["hidden_size"], device=device)).to(torch.bfloat16),
        "self_attn_q_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.02209708691207961).to(torch.bfloat16),
        "self_attn_k_proj_weight": (torch.randn(a["kv_size"], a["hidden_size"], device=device) * 0.02209708691207961).to(torch.bfloat16),
        "self_attn_v_proj_weight": (torch.randn(a["kv_size"], a["hidden_size"], device=device) * 0.02209708691207961).to(torch.bfloat16),
        "self_attn_o_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.02209708691207961).to(torch.bfloat16),
        "mlp_gate_proj_weight": (torch.randn(a["intermediate_size"], a["hidden_size"], device=device) * 0.02209708691207961).to(torch.bfloat16),
        "mlp_up_proj_weight": (torch.randn(a["intermediate_size"], a["hidden_size"], device=device) * 0.02209708691207961).to(torch.bfloat16),
        "mlp_down_proj_weight": (torch.randn(a["hidden_size"], a["intermediate_size"], device=device) * 0.011048543456039806).to(torch.bfloat16),
        "input_layernorm_weight": (1.0 + 0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.bfloat16),
        "post_attention_layernorm_weight": (1.0 + 0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.bfloat16),
    }


@torch.no_grad()
def run(hidden_states, self_attn_q_proj_weight, self_attn_k_proj_weight, self_attn_v_proj_weight, self_attn_o_proj_weight, mlp_gate_proj_weight, mlp_up_proj_weight, mlp_down_proj_weight, input_layernorm_weight, post_attention_layernorm_weight):
    _device = hidden_states.device
    _dtype = hidden_states.dtype
    _acc = torch.float64 if _dtype == torch.float64 else torch.float32
    rotary_inv_freq = torch.tensor(_ROTARY_INV_FREQ, dtype=torch.float32, device=_device)
    sym_size_int_4 = hidden_states.shape[0]
    sym_size_int_5 = hidden_states.shape[1]
    arange = torch.ops.aten.arange.default(sym_size_int_5, device=_device, pin_memory=False)
    unsqueeze = torch.ops.aten.unsqueeze.default(arange, 0)
    unsqueeze_1 = torch.ops.aten.unsqueeze.default(unsqueeze, 2)
    to = torch.ops.aten.to.dtype(unsqueeze_1, _acc)
    to_1 = torch.ops.aten.to.device(rotary_inv_freq, _device, _acc)
    mul = torch.ops.aten.mul.Tensor(to, to_1)
    cat = torch.ops.aten.cat.default([mul, mul], -1)
    cos = torch.ops.aten.cos.default(cat)
    mul_1 = torch.ops.aten.mul.Tensor(cos, 1.0)
    sin = torch.ops.aten.sin.default(cat)
    mul_2 = torch.ops.aten.mul.Tensor(sin, 1.0)
    to_2 = torch.ops.aten.to.dtype(mul_1, _dtype)
    to_3 = torch.ops.aten.to.dtype(mul_2, _dtype)
    to_4 = torch.ops.aten.to.dtype(hidden_states, _acc)
    pow_1 = torch.ops.aten.pow.Tensor_Scalar(to_4, 2)
    mean = torch.ops.aten.mean.dim(pow_1, [-1], True)
    add = torch.ops.aten.add.Tensor(mean, 1e-05)
    rsqrt = torch.ops.aten.rsqrt.default(add)
    mul_3 = torch.ops.aten.mul.Tensor(to_4, rsqrt)
    to_5 = torch.ops.aten.to.dtype(mul_3, _dtype)
    mul_4 = torch.ops.aten.mul.Tensor(input_layernorm_weight, to_5)
    linear = torch.ops.aten.linear.default(mul_4, self_attn_q_proj_weight)
    view = torch.ops.aten.view.default(linear, [sym_size_int_4, sym_size_int_5, -1, 64])
    transpose = torch.ops.aten.transpose.int(view, 1, 2)
    linear_1 = torch.ops.aten.linear.default(mul_4, self_attn_k_proj_weight)
    view_1 = torch.ops.aten.view.default(linear_1, [sym_size_int_4, sym_size_int_5, -1, 64])
    transpose_1 = torch.ops.aten.transpose.int(view_1, 1, 2)
    linear_2 = torch.ops.aten.linear.default(mul_4, self_attn_v_proj_weight)
    view_2 = torch.ops.aten.view.default(linear_2, [sym_size_int_4, sym_size_int_5, -1, 64])
    transpose_2 = torch.ops.aten.transpose.int(view_2, 1, 2)
    unsqueeze_2 = torch.ops.aten.unsqueeze.default(to_2, 1)
    unsqueeze_3 = torch.ops.aten.unsqueeze.default(to_3, 1)
    mul_5 = torch.ops.aten.mul.Tensor(transpose, unsqueeze_2)
    slice_1 = torch.ops.aten.slice.Tensor(transpose, 3, 0, 32)
    slice_2 = torch.ops.aten.slice.Tensor(transpose, 3, 32, 9223372036854775807)
    neg = torch.ops.aten.neg.default(slice_2)
    cat_1 = torch.ops.aten.cat.default([neg, slice_1], -1)
    mul_6 = torch.ops.aten.mul.Tensor(cat_1, unsqueeze_3)
    add_1 = torch.ops.aten.add.Tensor(mul_5, mul_6)
    mul_7 = torch.ops.aten.mul.Tensor(transpose_1, unsqueeze_2)
    slice_3 = torch.ops.aten.slice.Tensor(transpose_1, 3, 0, 32)
    slice_4 = torch.ops.aten.slice.Tensor(transpose_1, 3, 32, 9223372036854775807)
    neg_1 = torch.ops.aten.neg.default(slice_4)
    cat_2 = torch.ops.aten.cat.default([neg_1, slice_3], -1)
    mul_8 = torch.ops.aten.mul.Tensor(cat_2, unsqueeze_3)
    add_2 = torch.ops.aten.add.Tensor(mul_7, mul_8)
    scaled_dot_product_attention = torch.ops.aten.scaled_dot_product_attention.default(add_1, add_2, transpose_2, None, 0.0, True, scale=0.125, enable_gqa=True)
    reshape = torch.ops.aten.reshape.default(scaled_dot_product_attention, [sym_size_int_4, -1, sym_size_int_5, 64])
    transpose_3 = torch.ops.aten.transpose.int(reshape, 1, 2)
    reshape_1 = torch.ops.aten.reshape.default(transpose_3, [sym_size_int_4, sym_size_int_5, -1])
    linear_3 = torch.ops.aten.linear.default(reshape_1, self_attn_o_proj_weight)
    add_3 = torch.ops.aten.add.Tensor(hidden_states, linear_3)
    to_6 = torch.ops.aten.to.dtype(add_3, _acc)
    pow_2 = torch.ops.aten.pow.Tensor_Scalar(to_6, 2)
    mean_1 = torch.ops.aten.mean.dim(pow_2, [-1], True)
    add_4 = torch.ops.aten.add.Tensor(mean_1, 1e-05)
    rsqrt_1 = torch.ops.aten.rsqrt.default(add_4)
    mul_17 = torch.ops.aten.mul.Tensor(to_6, rsqrt_1)
    to_7 = torch.ops.aten.to.dtype(mul_17, _dtype)
    mul_18 = torch.ops.aten.mul.Tensor(post_attention_layernorm_weight, to_7)
    linear_4 = torch.ops.aten.linear.default(mul_18, mlp_gate_proj_weight)
    silu = torch.ops.aten.silu.default(linear_4)
    linear_5 = torch.ops.aten.linear.default(mul_18, mlp_up_proj_weight)
    mul_19 = torch.ops.aten.mul.Tensor(silu, linear_5)
    linear_6 = torch.ops.aten.linear.default(mul_19, mlp_down_proj_weight)
    add_5 = torch.ops.aten.add.Tensor(add_3, linear_6)
    return add_5
