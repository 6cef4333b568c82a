import torch


def run(grad_output, x, weight):
    return grad_output @ weight, grad_output.t() @ x
