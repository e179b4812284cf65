"""The process's resident memory, and handing freed heap memory back to the system.

Training allocates tensors whose shapes change from step to step (distinct tokens, longest
token, distinct negatives); glibc keeps the freed blocks in its heap, so the resident size
climbs by hundreds of MB before it levels off. ``release_freed_memory`` (glibc's
malloc_trim) returns them; elsewhere it does nothing.

glibc also maps every block over 32 MB afresh and unmaps it when freed, so each step pays
the page faults of its largest tensors again (the sampled logits and the LSTM's gates, 60-85
MB each for ``small``: a fresh tensor's element-wise pass costs ~5x one on reused memory).
``reuse_large_blocks`` serves them from the heap instead, where freed blocks are reused and
handed back only by ``release_freed_memory``.
"""

import ctypes
import ctypes.util
from typing import Optional

_libc = None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
except OSError:
    pass
if _libc is not None and not hasattr(_libc, "malloc_trim"):  # glibc only
    _libc = None


_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def reuse_large_blocks() -> None:
    """Blocks up to 1 GiB from the heap, and free memory kept until release_freed_memory."""
    if _libc is not None:
        _libc.mallopt(_M_MMAP_THRESHOLD, 1 << 30)
        _libc.mallopt(_M_TRIM_THRESHOLD, (1 << 31) - 1)


def release_freed_memory() -> None:
    if _libc is not None:
        _libc.malloc_trim(0)


def resident_mb() -> Optional[float]:
    """Resident set size in MB (Linux), else None."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None
