"""Figures in a long run's log that tell a slower host from a slower process.

When tokens/s falls over hours, either the host gave less (another tenant on the cores, a lower
clock) or the process itself does more per step (page faults of a fragmented heap, ...). A
fixed matmul timed at every log step follows the host only; page faults per step follow the
process only.
"""

import time
from typing import Optional

import torch

try:
    import resource
except ImportError:  # not Unix: no page fault counts
    resource = None


class HostProbe:
    """Times one fixed (256 x 1024) @ (1024 x 1024) matmul in ``dtype`` on the CPU, on operands
    made once, and counts the process's minor page faults between calls."""

    def __init__(self, dtype: Optional[torch.dtype] = None, size: int = 1024, rows: int = 256):
        generator = torch.Generator().manual_seed(0)
        self.a = torch.randn(rows, size, generator=generator).to(dtype or torch.float32)
        self.b = torch.randn(size, size, generator=generator).to(dtype or torch.float32)
        self.out = torch.empty(rows, size, dtype=self.a.dtype)
        self.flops = 2 * rows * size * size
        self.faults = _minor_faults()

    def matmul_gflops(self, repeats: int = 3) -> float:
        """The best of ``repeats`` timings, in GFLOP/s, with torch's threads as they are."""
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            torch.mm(self.a, self.b, out=self.out)
            best = min(best, time.perf_counter() - start)
        return self.flops / max(best, 1e-9) / 1e9

    def faults_since_last_call(self) -> Optional[int]:
        """Minor page faults of this process since the last call (or since construction);
        None where the system does not count them."""
        now = _minor_faults()
        faults = None if now is None or self.faults is None else now - self.faults
        self.faults = now
        return faults


def _minor_faults() -> Optional[int]:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource is not None else None
