import torch

_ROTARY_INV_FREQ = [1.0, 0.8146172165870667, 0.663601279258728, 0.5405809879302979, 0.44036662578582764, 0.3587302267551422, 0.2922278344631195, 0.2380538135766983, 0.193922758102417, 0.1579728126525879, 0.12868738174438477, 0.10483095049858093, 0.08539710193872452, 0.06956595182418823, 0.05666961893439293, 0.046164050698280334, 0.03760603070259094, 0.030634520575404167, 0.02495540864765644, 0.020329104736447334, 0.016560440883040428, 0.013490419834852219, 0.010989529080688953, 0.008952259086072445, 0.00729266507551074, 0.005940730683505535, 0.00483942124992609, 0.003942275885492563, 0.0032114461064338684, 0.0026160990819334984, 0.002131119603291154, 0.0017360467463731766, 0.001414213445968926, 0.001152042648755014, 0.0009384738514199853, 0.0007644969737157226, 0.0006227724370546639, 0.0005073211505077779, 0.0004132725589442998, 0.00033665893715806305, 0.00027424818836152554, 0.00022340727446135134, 0.00018199143232777715, 0.00014825335529167205, 0.00012076974235242233, 9.838111145654693e-05, 8.014294871827587e-05, 6.528582161990926e-05, 5.3182957344688475e-05, 4.332375465310179e-05, 3.529227615217678e-05, 2.8749695047736168e-05, 2.3419997887685895e-05, 1.907833393488545e-05, 1.5541540051344782e-05, 1.2660406355280429e-05, 1.0313385246263351e-05, 8.401460945606232e-06, 6.843975370429689e-06, 5.575220257014735e-06, 4.541670477919979e-06, 3.6997230381530244e-06, 3.01385807688348e-06, 2.4551407022954663e-06]


def make_inputs(axes_and_scalars, device):
    a = axes_and_scalars
    return {
        "hidden_states": (torch.randn(a["batch_size"], a["seq_len"], a["hidden_size"], device=device)).to(torch.bfloat16),
        "q_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "k_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "v_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "o_proj_weight": (torch.randn(a["hidden_size"], a["hidden_size"], device=device) * 0.015625).to(torch.bfloat16),
        "q_norm_weight": (1.0 + 0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.bfloat16),
        "k_norm_weight": (1.0 + 0.1 * torch.randn(a["hidden_size"], device=device)).to(torch.bfloat16),
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
    linear = torch.ops.aten.linear.default(hidden_states, q_proj_weight)
    to_2 = torch.ops.aten.to.dtype(linear, _acc)
    pow_1 = torch.ops.aten.pow.Tensor_Scalar(to_2, 2)
    mean = torch.ops.aten.mean.dim(pow_1, [-1], True)
    add = torch.ops.aten.add.Tensor(mean, 1e-06)
    rsqrt = torch.ops.aten.rsqrt.default(add)
    mul_3 = torch.ops.aten.mul.Tensor(to_2, rsqrt)
    mul_4 = torch.ops.aten.mul.Tensor(q_norm_weight, mul_3)
    to_3 = torch.ops.aten.to.dtype(mul_4, _dtype)
    linear_1 = torch.ops.aten.linear.default(hidden_states, k_proj_weight)
    to_4 = torch.ops.aten.to.dtype(linear_1, _acc)
    pow_2 = torch.ops.aten.pow.Tensor_Scalar(to_4, 2)
    mean_1 = torch.ops.aten.mean.dim(pow_2, [-1], True)
    add_1 = torch.ops.aten.add.Tensor(mean_1, 1e-06)
    rsqrt_1 = torch.ops.aten.rsqrt.default(add_1)
    mul_5 = torch.ops.aten.mul.Tensor(to_4, rsqrt_1)
    mul_6 = torch.ops.aten.mul.Tensor(k_norm_weight, mul_5)
    to_5 = torch.ops.aten.to.dtype(mul_6, _dtype)
    linear_2 = torch.ops.aten.linear.default(hidden_states, v_proj_weight)
    view = torch.ops.aten.view.default(to_3, [sym_size_int_4, sym_size_int_5, -1, 128])
    transpose = torch.ops.aten.transpose.int(view, 1, 2)
    view_1 = torch.ops.aten.view.default(to_5, [sym_size_int_4, sym_size_int_5, -1, 128])
    transpose_1 = torch.ops.aten.transpose.int(view_1, 1, 2)
    view_2 = torch.ops.aten.view.default(linear_2, [sym_size_int_4, sym_size_int_5, -1, 128])
    transpose_2 = torch.ops.aten.transpose.int(view_2, 1, 2)
    unsqueeze_2 = torch.ops.aten.unsqueeze.default(mul_1, 1)
    unsqueeze_3 = torch.ops.aten.unsqueeze.default(mul_2, 1)
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
    to_6 = torch.ops.aten.to.dtype(add_2, _dtype)
    to_7 = torch.ops.aten.to.dtype(add_3, _dtype)
    scaled_dot_product_attention = torch.ops.aten.scaled_dot_product_attention.default(to_6, to_7, transpose_2, None, 0.0, True, scale=0.08838834764831845)
    reshape = torch.ops.aten.reshape.default(scaled_dot_product_attention, [sym_size_int_4, -1, sym_size_int_5, 128])
    transpose_3 = torch.ops.aten.transpose.int(reshape, 1, 2)
    reshape_1 = torch.ops.aten.reshape.default(transpose_3, [sym_size_int_4, sym_size_int_5, -1])
    linear_3 = torch.ops.aten.linear.default(reshape_1, o_proj_weight)
    return linear_3
