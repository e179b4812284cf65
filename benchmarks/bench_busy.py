"""ELMo's speed on a busy machine: each path idle and beside a CPU-bound process, with the
thread governor (SPACY_ELMO_THREADS=auto, the default) and without it (fixed: torch's one
thread per core), side by side.

    python benchmarks/bench_busy.py [--bilm project/report/bilm] [--paths pipe train pretrain]

Paths: `pipe` (nlp.pipe with the elmo component, feature cache off: words/s), `train`
(nlp.update of ner_elmo.cfg's pipeline on CoNLL sentences it has not seen: words/s),
`pretrain` (the `tiny` preset, 32 rows x 20 tokens: tokens/s after its first steps). Each
measurement runs in a fresh process; the busy process is a Python loop on one core. Prints
the load average with the figures.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CONLL = REPO / ".." / "shared" / "data" / "ner" / "conll2003" / "eng.train"

WORKER = r"""
import json, sys, time
from pathlib import Path
path, bilm, conll, repo = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
import spacy
from spacy.tokens import Doc
from spacy.training import Example

def sentences(n):
    found, words = [], []
    if conll.exists():
        for line in conll.read_text(encoding="utf-8").splitlines() + [""]:
            if line.strip() and not line.startswith("-DOCSTART-"):
                words.append((line.split()[0], line.split()[-1]))
            elif words:
                found.append(words)
                words = []
    else:
        found = [[(f"word{(i * 7 + j) % 500}", "O") for j in range(14)] for i in range(n)]
    return found[:n]

if path == "pipe":
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": bilm, "cache_mb": 0}, "store_layers": False})
    nlp.initialize()
    texts = [" ".join(w for w, _ in s) for s in sentences(1200)]
    list(nlp.pipe(texts[:100]))
    started = time.perf_counter()
    words = sum(len(doc) for doc in nlp.pipe(texts[100:], batch_size=128))
    print(json.dumps({"rate": words / (time.perf_counter() - started)}))
elif path == "train":
    from spacy.training import iob_to_biluo
    config = spacy.util.load_config(repo / "project" / "configs" / "ner_elmo.cfg", overrides={
        "paths.elmo_options": bilm + "/options.json", "paths.elmo_weights": bilm + "/weights.hdf5"})
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    examples = []
    for s in sentences(1100):
        doc = Doc(nlp.vocab, words=[w for w, _ in s])
        tags = [t if t == "O" else "B-" + t[2:] if t.startswith("B-") else "I-" + t[2:] for _, t in s]
        examples.append(Example.from_dict(doc, {"entities": iob_to_biluo(tags)}))
    nlp.initialize(lambda: examples[:100])
    optimizer = nlp.resume_training()
    for i in range(0, 100, 20):
        nlp.update(examples[i:i + 20], sgd=optimizer)
    started = time.perf_counter()
    words = 0
    for i in range(100, 1100, 20):  # sentences the feature cache has not seen
        batch = examples[i:i + 20]
        nlp.update(batch, sgd=optimizer)
        words += sum(len(eg.reference) for eg in batch)
    print(json.dumps({"rate": words / (time.perf_counter() - started)}))
"""


def measure(path: str, bilm: Path, policy: str, busy: bool, text: Path) -> float:
    env = {**os.environ, "SPACY_ELMO_THREADS": policy}
    env.pop("OMP_NUM_THREADS", None)
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        time.sleep(1.0 if busy else 0.0)
        if path == "pretrain":
            with tempfile.TemporaryDirectory() as out:
                command = [sys.executable, "-m", "spacy_elmo", "pretrain", str(REPO / "project" / "configs" / "pretrain_tiny.cfg"), out,
                           "--paths.train", str(text), "--training.max_steps", "120", "--training.eval_every", "1000",
                           "--training.log_every", "20", "--data.batch_size", "32", "--training.progress_bar", "false"]  # fmt: skip
                subprocess.run(command, env=env, check=True, capture_output=True, timeout=1800)
                records = [json.loads(line) for line in (Path(out) / "metrics.jsonl").read_text().splitlines()]
                rates = [r["tokens_per_second"] for r in records if r.get("step", 0) > 40 and "tokens_per_second" in r]
                return sum(rates) / len(rates)
        result = subprocess.run([sys.executable, "-c", WORKER, path, str(bilm), str(CONLL), str(REPO)], env=env,
                                check=True, capture_output=True, text=True, timeout=1800)  # fmt: skip
        return json.loads(result.stdout.strip().splitlines()[-1])["rate"]
    finally:
        if loop is not None:
            loop.kill()
            loop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bilm", type=Path, default=REPO / "project" / "report" / "bilm")
    parser.add_argument("--paths", nargs="+", default=["pipe", "train", "pretrain"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "text.txt"
        lines: List[str] = []
        if CONLL.exists():
            lines = [" ".join(line.split()[0] for line in block.splitlines() if line.strip())
                     for block in CONLL.read_text(encoding="utf-8").split("\n\n")]  # fmt: skip
        text.write_text(
            "\n".join(line for line in lines if line) or "\n".join(f"word{i % 97} word{i % 13} ." for i in range(20000))
        )
        print(f"cpus {os.cpu_count()}, load average at start {os.getloadavg()}")
        print(f"{'path':<9} {'policy':<6} {'idle':>10} {'busy':>10} {'busy/idle':>10}")
        for path in args.paths:
            figures: Dict[str, Dict[bool, float]] = {}
            for policy in ("fixed", "auto"):
                figures[policy] = {busy: measure(path, args.bilm, policy, busy, text) for busy in (False, True)}
                idle, busy = figures[policy][False], figures[policy][True]
                print(f"{path:<9} {policy:<6} {idle:10,.0f} {busy:10,.0f} {busy / idle:10.0%}", flush=True)
        print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
