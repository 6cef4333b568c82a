import torch

_ROTARY_INV_FREQ = [1.0, 0.8058422207832336, 0.6493816375732422, 0.5232991576194763, 0.4216965138912201, 0.33982083201408386, 0.2738419771194458, 0.22067339718341827, 0.17782793939113617, 0.14330126345157623, 0.11547820270061493, 0.09305720031261444, 0.07498941570520401, 0.0604296438395977, 0.04869675263762474, 0.03924189880490303, 0.03162277862429619, 0.025482967495918274, 0.02053525112569332, 0.016548171639442444, 0.01333521492779255, 0.010746078565716743, 0.00865964312106371, 0.006978305988013744, 0.005623413249850273, 0.004531583748757839, 0.003651741426438093, 0.002942727180197835, 0.0023713738191872835, 0.001910952851176262, 0.0015399265103042126, 0.0012409378541633487, 0.0010000000474974513, 0.0008058422245085239, 0.0006493816617876291, 0.0005232990952208638, 0.00042169648804701865, 0.0003398208355065435, 0.00027384195709601045, 0.00022067342069931328, 0.00017782794020604342, 0.00014330126577988267, 0.00011547819303814322, 9.305720595875755e-05, 7.498942431993783e-05, 6.042963650543243e-05, 4.869675467489287e-05, 3.92418987757992e-05, 3.162277425872162e-05, 2.5482966520939954e-05, 2.0535249859676696e-05, 1.6548170606256463e-05, 1.333521413471317e-05, 1.0746078260126524e-05, 8.659643754072022e-06, 6.978306373639498e-06, 5.62341347176698e-06, 4.531583726929966e-06, 3.651741280918941e-06, 2.9427271783788456e-06, 2.3713737391517498e-06, 1.910952960315626e-06, 1.5399265294036013e-06, 1.2409377632138785e-06]


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["batch_size"], a["seq_len"], a["hidden_size"], device=device)).to(torch.bfloat16),
        "q_proj_weight": (torch.randn(a["q_size"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "k_proj_weight": (torch.randn(a["head_dim"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "v_proj_weight": (torch.randn(a["head_dim"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "o_proj_weight": (torch.randn(a["hidden_size"], a["q_size"], device=device) * 0.04419417382415922).to(torch.bfloat16),
        "q_norm_weight": (1.0 + 0.1 * torch.randn(a["head_dim"], device=device)).to(torch.bfloat16),
        "k_norm_weight": (1.0 + 0.1 * torch.randn(a["head_dim"], device=device)).to(torch.bfloat16),
    }


@torch.no_grad()
def run(hidden_states, q_proj_weight, k_proj_weight, v_proj_weight, o_proj_weight, q_norm_weight, k_norm_weight):
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
    linear = torch.ops.aten.linear.default(hidden_states, q_proj_weight)
    view = torch.ops.aten.view.default(linear, [sym_size_int_4, sym_size_int_5, -1, 128])
    to_4 = torch.ops.aten.to.dtype(view, _acc)
    pow_1 = torch.ops.aten.pow.Tensor_Scalar(to_4, 2)
    mean = torch.ops.aten.mean.dim(pow_1, [-1], True)
    add = torch.ops.aten.add.Tensor(mean, 1e-06)
    rsqrt = torch.ops.aten.rsqrt.default(add)
    mul_3 = torch.ops.aten.mul.Tensor(to_4, rsqrt)
    to_5 = torch.ops.aten.to.dtype(mul_3, _dtype)
    mul_4 = torch.ops.aten.mul.Tensor(q_norm_weight, to_5)
    transpose = torch.ops.aten.transpose.int(mul_4, 1, 2)
    linear_1 = torch.ops.aten.linear.default(hidden_states, k_proj_weight)
    view_1 = torch.ops.aten.view.default(linear_1, [sym_size_int_4, sym_size_int_5, -1, 128])
    to_6 = torch.ops.aten.to.dtype(view_1, _acc)
    pow_2 = torch.ops.aten.pow.Tensor_Scalar(to_6, 2)
    mean_1 = torch.ops.aten.mean.dim(pow_2, [-1], True)
    add_1 = torch.ops.aten.add.Tensor(mean_1, 1e-06)
    rsqrt_1 = torch.ops.aten.rsqrt.default(add_1)
    mul_5 = torch.ops.aten.mul.Tensor(to_6, rsqrt_1)
    to_7 = torch.ops.aten.to.dtype(mul_5, _dtype)
    mul_6 = torch.ops.aten.mul.Tensor(k_norm_weight, to_7)
    transpose_1 = torch.ops.aten.transpose.int(mul_6, 1, 2)
    linear_2 = torch.ops.aten.linear.default(hidden_states, v_proj_weight)
    view_2 = torch.ops.aten.view.default(linear_2, [sym_size_int_4, sym_size_int_5, -1, 128])
    transpose_2 = torch.ops.aten.transpose.int(view_2, 1, 2)
    unsqueeze_2 = torch.ops.aten.unsqueeze.default(to_2, 1)
    unsqueeze_3 = torch.ops.aten.unsqueeze.default(to_3, 1)
    mul_7 = torch.ops.aten.mul.Tensor(transpose, unsqueeze_2)
    slice_1 = torch.ops.aten.slice.Tensor(transpose, 3, 0, 64)
    slice_2 = torch.ops.aten.slice.Tensor(transpose, 3, 64, 9223372036854775807)
    neg = torch.ops.aten.neg.default(slice_2)
    cat_1 = torch.ops.aten.cat.default([neg, slice_1], -1)
    mul_8 = torch.ops.aten.mul.Tensor(cat_1, unsqueeze_3)
    add_2 = torch.ops.aten.add.Tensor(mul_7, mul_8)
    mul_9 = torch.ops.aten.mul.Tensor(transpose_1, unsqueeze_2)
    slice_3 = torch.ops.aten.slice.Tensor(transpose_1, 3, 0, 64)
    slice_4 = torch.ops.aten.slice.Tensor(transpose_1, 3, 64, 9223372036854775807)
    neg_1 = torch.ops.aten.neg.default(slice_4)
    cat_2 = torch.ops.aten.cat.default([neg_1, slice_3], -1)
    mul_10 = torch.ops.aten.mul.Tensor(cat_2, unsqueeze_3)
    add_3 = torch.ops.aten.add.Tensor(mul_9, mul_10)
    scaled_dot_product_attention = torch.ops.aten.scaled_dot_product_attention.default(add_2, add_3, transpose_2, None, 0.0, True, scale=0.08838834764831845, enable_gqa=True)
    reshape = torch.ops.aten.reshape.default(scaled_dot_product_attention, [sym_size_int_4, -1, sym_size_int_5, 128])
    transpose_3 = torch.ops.aten.transpose.int(reshape, 1, 2)
    reshape_1 = torch.ops.aten.reshape.default(transpose_3, [sym_size_int_4, sym_size_int_5, -1])
    linear_3 = torch.ops.aten.linear.default(reshape_1, o_proj_weight)
    return linear_3
