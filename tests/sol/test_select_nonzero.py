"""One sorted `nonzero` of a base answers each slice's `nonzero` as torch computes it (sol/select_nonzero.py)."""

import pytest
import torch

from solbench.sol.select_nonzero import MIN_ELEMENTS, SliceNonzero


def _mask(tokens: int, slots: int, experts: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    ids = torch.stack([torch.randperm(experts, generator=generator)[:slots] for _ in range(tokens)])
    return torch.nn.functional.one_hot(ids, experts)  # [tokens, slots, experts], contiguous


@pytest.mark.parametrize(
    "slice_of",
    [
        lambda m, e: m.permute(2, 1, 0)[e],  # the routing loop's mask[e]
        lambda m, e: m.permute(1, 2, 0)[e % 4],
        lambda m, e: m[:, e % 4, :].t(),
        lambda m, e: m.permute(2, 0, 1)[e][:, 1],  # two dims fixed
    ],
)
def test_every_slice_gets_torchs_own_indices(slice_of):
    mask = _mask(512, 4, 512)
    assert mask.numel() >= MIN_ELEMENTS
    slices = SliceNonzero()
    assert slices.nonzero(slice_of(mask, 2)) is None  # the first slice asked for: left to torch, nothing sorted
    assert not slices._sorted
    for e in (0, 1, 7, 255, 511):
        view = slice_of(mask, e)
        found = slices.nonzero(view)
        assert found is not None
        assert torch.equal(found, torch.nonzero(view))


def test_a_write_to_the_base_is_seen():
    mask = _mask(512, 4, 512)
    slices = SliceNonzero()
    view = mask.permute(2, 1, 0)[3]
    slices.nonzero(view)
    slices.nonzero(view)
    mask[:, :, 3] = 1
    assert slices.nonzero(mask.permute(2, 1, 0)[3]) is None  # the first slice since the write: left to torch
    assert torch.equal(slices.nonzero(mask.permute(2, 1, 0)[3]), torch.nonzero(view))


def test_a_base_written_between_its_slices_is_never_sorted():
    """A loop that writes to the mask between slices (`mask[idx[cap:], e] = 0`, a capacity cut) would sort all of
    it per slice (100x the per-slice `nonzero` for 128 experts of 8,192 tokens): each slice is left to torch."""
    mask = _mask(512, 4, 512)
    slices = SliceNonzero()
    for e in range(4):
        assert slices.nonzero(mask.permute(2, 1, 0)[e]) is None
        mask[0, 0, e] = 1 - mask[0, 0, e]
    assert not slices._sorted


def test_small_bases_and_views_that_are_not_slices_are_left_to_torch():
    slices = SliceNonzero()
    assert slices.nonzero(_mask(16, 2, 8).permute(2, 1, 0)[1]) is None
    big = _mask(512, 4, 512)
    assert slices.nonzero(big.permute(2, 1, 0)[1, :, ::2]) is None  # a stride no dim of the base has


@pytest.mark.parametrize("listed", [0, 1 << 12])
def test_slice_bounds_listed_once_or_searched_per_slice_agree_with_torch(monkeypatch, listed):
    """A base with more slices than MAX_LISTED_GROUPS has each slice's bounds searched for on its own."""
    import solbench.sol.select_nonzero as select_nonzero

    monkeypatch.setattr(select_nonzero, "MAX_LISTED_GROUPS", listed)
    for mask in (_mask(512, 4, 512), torch.ones(512, 4, 512, dtype=torch.int64)):  # full slices: every bound is met
        slices = SliceNonzero()
        slices.nonzero(mask.permute(2, 1, 0)[1])  # the first: left to torch
        for e in (0, 3, 511):
            view = mask.permute(2, 1, 0)[e]
            assert torch.equal(slices.nonzero(view), torch.nonzero(view))
        assert (slices._sorted.popitem()[1].bounds is None) == (listed == 0)
