"""oneDNN kernels built per window of pretraining steps, with resident memory and CPU time.

    python summarise.py pretrain-before pretrain-after

Each run folder holds the run's metrics.jsonl and onednn-create.txt.gz: the run's output under
ONEDNN_VERBOSE=profile_create, cache misses and log lines only, each prefixed with the seconds
since start (run.sh). A miss is a kernel built (JIT) and cached for a new operand shape.
"""

import gzip
import json
import sys
from pathlib import Path
from typing import Dict, List, Tuple


def load(run: Path) -> Tuple[Dict[int, dict], List[Tuple[float, float]]]:
    steps = {row["step"]: row for row in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())}
    lines = gzip.decompress((run / "onednn-create.txt.gz").read_bytes()).decode().splitlines()
    start = next(float(line.split(",")[0]) for line in lines if "Dev perplexity before" in line)
    misses = [
        (float(line.split(",")[0]) - start, float(line.rsplit(",", 1)[1]))
        for line in lines
        if "create:cache_miss" in line
    ]
    return steps, misses


def main(runs: List[str]) -> None:
    loaded = [load(Path(run)) for run in runs]
    print("run: kernels built in all")
    for run, (_, misses) in zip(runs, loaded):
        print(f"  {run}: {len(misses)} ({sum(ms for _, ms in misses) / 1000:.1f} s building them)")
    print("step | per run: kernels built in the last 10 steps, resident MB, CPU s/step over the last 10 steps")
    windows = [list(steps) for steps, _ in loaded]
    for step in sorted(set(windows[0]).intersection(*windows[1:])):
        if step == 0 or (step % 50 and step > 30):
            continue
        cells = []
        for steps, misses in loaded:
            previous = steps[step - 10]
            row = steps[step]
            built = sum(previous["elapsed_seconds"] <= t < row["elapsed_seconds"] for t, _ in misses)
            cpu = (row["cpu_seconds"] - previous["cpu_seconds"]) / 10
            cells.append(f"{built:3d} {row['rss_mb']:6.0f} MB {cpu:.2f}")
        print(f"{step:4d} | " + " | ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
