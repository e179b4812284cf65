"""The host probe that a long run's log carries: a fixed matmul's speed and page faults per step."""

import math
import mmap

import pytest
import torch

from spacy_elmo.pretrain.host import HostProbe


@pytest.mark.parametrize("dtype", [None, torch.bfloat16])
def test_the_probe_times_its_matmul(dtype):
    probe = HostProbe(dtype, size=256, rows=64)
    assert probe.a.dtype == (dtype or torch.float32)
    gflops = probe.matmul_gflops()
    assert math.isfinite(gflops) and gflops > 0
    assert torch.allclose(probe.out.float(), (probe.a @ probe.b).float())


def test_page_faults_are_counted_from_the_last_call():
    probe = HostProbe(size=64, rows=8)
    if probe.faults_since_last_call() is None:
        pytest.skip("this system does not count page faults")
    size = 64 << 20
    with mmap.mmap(-1, size) as fresh:  # anonymous memory: each page faults when first written
        for offset in range(0, size, mmap.PAGESIZE):
            fresh[offset] = 1
        touched = probe.faults_since_last_call()
    assert touched >= size // (2 << 20)  # at least one fault per 2 MB page
    assert probe.faults_since_last_call() < touched
