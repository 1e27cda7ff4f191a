"""How many threads torch's own kernels use while a training runs: part of its rounding (a
matrix product sums in another order on another count), so a training that must come out the
same from any caller (``harness train``, a study's queue, a test's process) pins it."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def torch_threads(n: int):
    """torch at ``n`` intra-op threads inside the block, as it was after."""
    import torch

    was = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(was)
