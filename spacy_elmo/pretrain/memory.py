"""The process's resident memory, and handing freed heap memory back to the system.

Training allocates tensors whose shapes change from step to step (distinct tokens, longest
token, distinct negatives); glibc keeps the freed blocks in its heap, so the resident size
climbs by hundreds of MB before it levels off. ``release_freed_memory`` (glibc's
malloc_trim) returns them; elsewhere it does nothing.
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
