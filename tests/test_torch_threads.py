import pytest
import torch

from solbench.torch_threads import at_most_threads


def test_the_thread_count_is_lowered_inside_and_given_back_on_an_exception():
    chosen = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(RuntimeError):
            with at_most_threads(1):
                assert torch.get_num_threads() == 1
                raise RuntimeError("the check failed")
        assert torch.get_num_threads() == 2
        with at_most_threads(4):  # never raised: a larger pool would start new workers
            assert torch.get_num_threads() == 2
        with at_most_threads(None):
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(chosen)
