"""Words/s of `nlp.pipe` with the elmo component: one process (torch on 1 and on 2 threads)
against `n_process=2`, side by side, on the same texts.

    python benchmarks/bench_processes.py [--bilm project/report/bilm] [--sentences 2000] [--repeats 3]

The texts are CoNLL-2003 eng.train sentences (generated text where the data is absent), one
Doc each, run cold (the feature cache off) so that every call computes its vectors. Each
setting runs once per round, rounds interleaved; the median is printed with the load average.
"""

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Dict, List

import spacy
import torch

HERE = Path(__file__).resolve().parent
CONLL = HERE.parent / ".." / "shared" / "data" / "ner" / "conll2003" / "eng.train"


def read_texts(n: int) -> List[str]:
    if CONLL.exists():
        texts, words = [], []
        for line in CONLL.read_text(encoding="utf-8").splitlines() + [""]:
            if line.strip() and not line.startswith("-DOCSTART-"):
                words.append(line.split()[0])
            elif words:
                texts.append(" ".join(words))
                words = []
        return texts[:n]
    return [" ".join(f"word{(i * 7 + j) % 500}" for j in range(14)) for i in range(n)]


def build(bilm: Path) -> spacy.language.Language:
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": str(bilm), "cache_mb": 0}, "store_layers": False})
    nlp.initialize()
    return nlp


def words_per_second(nlp: spacy.language.Language, texts: List[str], n_process: int, threads: int) -> float:
    torch.set_num_threads(threads)
    started = time.perf_counter()
    words = sum(len(doc) for doc in nlp.pipe(texts, n_process=n_process, batch_size=256))
    return words / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bilm", type=Path, default=HERE.parent / "project" / "report" / "bilm")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    texts = read_texts(args.sentences)
    nlp = build(args.bilm)
    settings = {"1 process, 1 thread": (1, 1), "1 process, 2 threads": (1, 2), "2 processes (1 thread each)": (2, 1)}
    figures: Dict[str, List[float]] = {name: [] for name in settings}
    words_per_second(nlp, texts[:64], 1, 2)  # warm-up: the fast path is built on the first call
    for _ in range(args.repeats):
        for name, (n_process, threads) in settings.items():
            figures[name].append(words_per_second(nlp, texts, n_process, threads))
    print(f"nlp.pipe with elmo ({args.bilm}), {len(texts)} texts, {sum(len(t.split()) for t in texts):,} words, "
          f"feature cache off, median of {args.repeats}; cpus {os.cpu_count()}, load average {os.getloadavg()}")  # fmt: skip
    base = statistics.median(figures["1 process, 2 threads"])
    for name, values in figures.items():
        median = statistics.median(values)
        print(f"  {name:<28} {median:9,.0f} words/s  ({median / base:.2f}x of 1 process, 2 threads)")


if __name__ == "__main__":
    main()
