"""A clamp of a strided row-major view (`gate_up[..., ::2]` in a gated MLP) gets its shape-only result directly.

The result must be what the meta kernel makes (shape, dtype and strides): for such views it is contiguous.
Views whose result the meta kernel lays out otherwise (transposed, expanded) still go to the meta kernel.
"""

import pytest


def _views():
    import torch

    x = torch.empty(6, 5760, device="meta")
    half = torch.empty(3, 1, 8, 16, dtype=torch.bfloat16, device="meta")
    return [
        x[..., ::2],
        x[..., 1::2],
        x[:, :100],
        x[::2, 5:],
        half[..., ::2],
        torch.empty(1, 10, device="meta")[..., ::3],
    ]


@pytest.mark.parametrize("bounds", [(None, 7.0), (-7.0, 7.0), (-7, None)])
def test_strided_clamps_match_the_meta_kernel(bounds):
    import torch

    from solbench.sol.hybrid import _pointwise_shape

    for view in _views():
        args = (view, *bounds)
        fast = _pointwise_shape(torch.ops.aten.clamp.default, args, {}, [view])
        expected = torch.ops.aten.clamp.default(*args)
        assert fast is not None, view.stride()
        assert (fast.shape, fast.dtype, fast.stride()) == (expected.shape, expected.dtype, expected.stride())


def test_views_laid_out_otherwise_still_go_to_the_meta_kernel():
    import torch

    from solbench.sol.hybrid import _pointwise_shape

    x = torch.empty(6, 8, device="meta")
    for view in (
        x.t(),
        x.t()[::2],
        torch.empty(6, 1, device="meta").expand(6, 8),
        torch.empty(4, 3, 2, device="meta").permute(0, 2, 1),
    ):
        assert _pointwise_shape(torch.ops.aten.clamp.default, (view, None, 1.0), {}, [view]) is None
