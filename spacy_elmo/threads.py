"""torch's CPU threads kept to the cores that other processes leave free.

torch runs one thread per core by default. When another process keeps a core busy, every
parallel region waits for the thread that shares that core, and ELMo ran at 3-10 % of its
idle speed on 2 cores. A ThreadGovernor, asked at batch boundaries, measures how much CPU the
other processes used since it last looked (the machine's busy time in /proc/stat over this
process's cores, minus this process's own CPU time) and sets torch's threads to the cores
left, between 1 and the thread count torch was last given by anyone else (the governor's
ceiling follows the user's torch.set_num_threads).

``SPACY_ELMO_THREADS=fixed`` in the environment turns it off (torch's threads stay as set).
Where /proc/stat is absent (not Linux) the governor does nothing.
"""

import os
import time
from pathlib import Path
from typing import Callable, Optional, Sequence, Tuple

import torch

POLICY_VARIABLE = "SPACY_ELMO_THREADS"
STAT = Path("/proc/stat")


def read_busy_seconds(cpus: Sequence[int], stat: Path = STAT) -> Optional[float]:
    """Seconds the given CPUs spent busy since boot (all processes), or None without /proc/stat."""
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return None
    wanted = {f"cpu{c}" for c in cpus}
    ticks = 0
    for line in lines:
        fields = line.split()
        if fields and fields[0] in wanted:
            values = [int(v) for v in fields[1:]]
            idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
            ticks += sum(values[:8]) - idle  # user nice system idle iowait irq softirq steal
    return ticks / os.sysconf("SC_CLK_TCK")


class ThreadGovernor:
    """Sets torch's threads to the cores other processes leave free, re-measured at most every
    ``interval`` seconds when ``update()`` is called."""

    def __init__(
        self,
        max_threads: Optional[int] = None,
        interval: float = 2.0,
        read_busy: Optional[Callable[[], Optional[float]]] = None,
        clock: Callable[[], float] = time.monotonic,
        own_cpu: Callable[[], float] = time.process_time,
        cpus: Optional[Sequence[int]] = None,
        enabled: bool = True,
    ) -> None:
        self.cpus = (
            sorted(os.sched_getaffinity(0))
            if cpus is None and hasattr(os, "sched_getaffinity")
            else list(cpus or range(os.cpu_count() or 1))
        )
        self.max_threads = max(1, min(max_threads or torch.get_num_threads(), len(self.cpus)))
        self.interval = interval
        self.enabled = enabled and os.environ.get(POLICY_VARIABLE, "auto") != "fixed"
        self._read_busy = read_busy or (lambda: read_busy_seconds(self.cpus))
        self._clock, self._own_cpu = clock, own_cpu
        self._last: Optional[Tuple[float, float, float]] = None
        self.threads = torch.get_num_threads()

    def others_busy_cores(self) -> Optional[float]:
        """Cores' worth of CPU used by other processes since the last call (None on the first)."""
        busy = self._read_busy()
        if busy is None:
            return None
        now = (self._clock(), busy, self._own_cpu())
        last, self._last = self._last, now
        if last is None or now[0] - last[0] <= 0:
            return None
        elapsed = now[0] - last[0]
        return max(0.0, (now[1] - last[1]) - (now[2] - last[2])) / elapsed

    def update(self) -> int:
        """Re-measure if ``interval`` has passed and set torch's threads; returns them."""
        if not self.enabled:
            return self.threads
        current = torch.get_num_threads()
        if current != self.threads:  # set by someone else since: the new ceiling
            self.max_threads, self.threads = max(1, min(current, len(self.cpus))), current
        if self._last is not None and self._clock() - self._last[0] < self.interval:
            return self.threads
        others = self.others_busy_cores()
        if others is not None:
            free = len(self.cpus) - others
            threads = max(1, min(self.max_threads, int(free + 0.25)))  # a core 3/4 free counts
            if threads != current:
                torch.set_num_threads(threads)
            self.threads = threads
        return self.threads


_PROCESS_GOVERNOR: dict = {}


def process_governor() -> ThreadGovernor:
    """This process's governor, made on first use (anew in a forked or spawned worker, with
    the thread count the worker starts with as its ceiling)."""
    pid = os.getpid()
    if pid not in _PROCESS_GOVERNOR:
        _PROCESS_GOVERNOR.clear()
        _PROCESS_GOVERNOR[pid] = ThreadGovernor()
    return _PROCESS_GOVERNOR[pid]
