"""small bf16, 32 x 20, as rss/mp-true, but freed heap memory handed back after every step; times each trim."""

import json
import runpy
import sys
import time

import spacy_elmo.pretrain.train as T

times = []
original = T.Trainer.train_step


def train_step(self):
    out = original(self)
    t = time.perf_counter()
    T.release_freed_memory()
    times.append(time.perf_counter() - t)
    if len(times) % 50 == 0:
        with open("/root/elmo-runs/trim/trim-times.json", "w") as f:
            s = sorted(times)
            json.dump({"n": len(s), "median_ms": 1000 * s[len(s) // 2], "max_ms": 1000 * s[-1], "total_s": sum(s)}, f)
    return out


T.Trainer.train_step = train_step
sys.argv = ["spacy_elmo"] + sys.argv[1:]
runpy.run_module("spacy_elmo", run_name="__main__")
