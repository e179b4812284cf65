"""Words/s of trained spaCy pipelines side by side on the same texts, e.g. the baseline NER,
NER with ELMo and NER with MiniLM through spacy-transformers.

    python benchmarks/bench_task_pipelines.py NAME=PIPELINE_DIR ... [--data test.spacy] [--threads 2] [--repeats 3]

The texts are the Docs of --data (their words, annotations dropped; the CoNLL-2003 test set
as the project converts it by default), given to `nlp.pipe` as pre-tokenised Docs so that
every pipeline sees the same tokens. Each pipeline runs once per round, rounds interleaved
after one warm-up round; the median words/s is printed with the load average. An `elmo`
component runs with its feature cache off (every round computes its vectors). Prints figures
only.
"""

import argparse
import statistics
import time
from pathlib import Path
from typing import Dict, List

import spacy
import torch
from bench_bilm import load
from spacy.tokens import Doc, DocBin

HERE = Path(__file__).resolve().parent
CONLL_TEST = HERE.parent / "project" / "corpus" / "ner" / "test.spacy"


def load_cold(path: str) -> spacy.language.Language:
    """The pipeline, with the feature cache of any ELMo biLM in it switched off."""
    config = spacy.util.load_config(Path(path) / "config.cfg")
    overrides = {
        f"components.{name}.model.cache_mb": 0
        for name, component in config["components"].items()
        if "cache_mb" in component.get("model", {})
    }
    return spacy.load(path, config=overrides)


def words_per_second(nlp: spacy.language.Language, docs: List[Doc]) -> float:
    fresh = [Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in docs]
    start = time.perf_counter()
    for _ in nlp.pipe(fresh, batch_size=256):
        pass
    return sum(len(doc) for doc in fresh) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pipelines", nargs="+", help="NAME=PIPELINE_DIR (a folder spacy.load reads)")
    parser.add_argument("--data", type=Path, default=CONLL_TEST, help="a .spacy file of the texts")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    named = dict(item.split("=", 1) for item in args.pipelines if "=" in item)
    if len(named) != len(args.pipelines):
        parser.error("give each pipeline as NAME=PIPELINE_DIR")
    if not args.data.exists():
        parser.error(f"{args.data} does not exist: run `spacy project run corpus` or give --data")
    torch.set_num_threads(args.threads)
    pipelines = {name: load_cold(path) for name, path in named.items()}
    docs = list(DocBin().from_disk(args.data).get_docs(spacy.blank("en").vocab))
    print(
        f"threads: {args.threads}  {load()}  texts: {args.data} ({len(docs):,} docs, {sum(len(d) for d in docs):,} words)"
    )
    rates: Dict[str, List[float]] = {name: [] for name in pipelines}
    for round_ in range(args.repeats + 1):  # the first round is the warm-up
        for name, nlp in pipelines.items():
            rate = words_per_second(nlp, docs)
            if round_:
                rates[name].append(rate)
    for name, values in rates.items():
        print(f"{name:>16} {' '.join(pipelines[name].pipe_names):>24} {statistics.median(values):>9,.0f} words/s")
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
