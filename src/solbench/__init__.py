"""solbench: evaluate compute kernels against a PyTorch reference and the hardware's speed of light."""

__version__ = "0.1.0"
