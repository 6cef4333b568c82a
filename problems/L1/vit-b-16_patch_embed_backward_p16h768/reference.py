import torch


def run(grad_output, x):
    patch = x.shape[-1] // grad_output.shape[-1]
    weight_shape = (grad_output.shape[1], x.shape[1], patch, patch)
    grad_weight = torch.nn.grad.conv2d_weight(x, weight_shape, grad_output, stride=patch)
    return grad_weight, grad_output.sum(dim=(0, 2, 3))
