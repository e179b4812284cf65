"""Heap settings for pretraining: large freed blocks stay in the heap until handed back."""

import pytest
import torch

from spacy_elmo.pretrain import memory


def test_large_blocks_are_kept_until_released():
    if memory._libc is None or memory.resident_mb() is None:
        pytest.skip("glibc and /proc/self/status are needed")
    memory.reuse_large_blocks()
    memory.release_freed_memory()
    before = memory.resident_mb()
    block = torch.ones(96 << 18)  # 96 MB, every page touched
    del block
    kept = memory.resident_mb()
    memory.release_freed_memory()
    released = memory.resident_mb()
    assert kept - before > 64  # freed, but not unmapped: the next step reuses its pages
    assert kept - released > 64
