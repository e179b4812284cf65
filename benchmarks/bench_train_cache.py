"""Training words/s, epoch 1 vs epoch 2, with the frozen biLM's feature cache on and off.

    .venv/bin/python benchmarks/bench_train_cache.py [--sentences 300] [--preset small]

Trains project/configs/ner_elmo.cfg in-process on the first CoNLL-2003 sentences. Epoch 1
runs the biLM on every sentence; epoch 2 serves them from the cache (cache_mb > 0).
Default model: the tiny fixture; --preset gives a fresh model of a published size.
"""

import argparse
import importlib.util
import time
from pathlib import Path

import spacy
import torch
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import load_config, load_model_from_config, minibatch
from thinc.api import fix_random_seed

from spacy_elmo.layers import get_feature_cache

REPO = Path(__file__).parents[1]
DATA = REPO / ".." / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--preset", default=None, help="tiny/small/medium/original: fresh biLM of that size")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1 gives stable figures on shared cores)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    spec = importlib.util.spec_from_file_location("convert_conll", REPO / "project" / "scripts" / "convert_conll.py")
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)
    sentences = list(convert.read_conll2003(DATA / "ner" / "conll2003" / "eng.train", limit=args.sentences))
    n_words = sum(len(words) for words, _ in sentences)
    model = f"preset {args.preset}" if args.preset else "fixture (projection 16)"
    print(
        f"{len(sentences)} sentences, {n_words} words, batch {args.batch_size}, biLM: {model}, torch threads {args.threads}"
    )
    _warm_up(args.preset)
    for cache_mb in (0, 512):
        nlp = _pipeline(args.preset, cache_mb)
        examples = [Example.from_dict(Doc(nlp.vocab, words=w), {"entities": t}) for w, t in sentences]
        fix_random_seed(0)
        optimizer = nlp.initialize(lambda: examples)
        cache = get_feature_cache(nlp.get_pipe("elmo").model)
        for epoch in (1, 2):
            start = time.perf_counter()
            for batch in minibatch(examples, args.batch_size):
                nlp.update(batch, sgd=optimizer)
            seconds = time.perf_counter() - start
            print(
                f"cache_mb={cache_mb:<4} epoch {epoch}: {n_words / seconds:8.0f} words/s ({seconds:.2f} s)  "
                f"cache hits {cache.hits}, misses {cache.misses}, {cache.n_bytes / 2**20:.1f} MB"
            )


def _warm_up(preset) -> None:
    """One untimed pass, so that first-call costs (torch threads, allocations) fall outside."""
    nlp = _pipeline(preset, 0)
    examples = [Example.from_dict(Doc(nlp.vocab, words=["Warm", "up", "."]), {"entities": ["O", "O", "O"]})]
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)


def _pipeline(preset, cache_mb: int) -> spacy.Language:
    fixture = DATA / "elmo_fixtures" / "allennlp"
    elmo = {
        "components.elmo.model.cache_mb": cache_mb,
        "paths.elmo_options": None if preset else str(fixture / "options.json"),
        "paths.elmo_weights": None if preset else str(fixture / "lm_weights.hdf5"),
        "components.elmo.model.preset": preset,
    }
    config = load_config(REPO / "project" / "configs" / "ner_elmo.cfg", overrides=elmo, interpolate=False)
    return load_model_from_config(config, auto_fill=True)


if __name__ == "__main__":
    main()
