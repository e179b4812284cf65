"""The elmo component in `nlp.pipe(n_process=2)`: the same vectors as in one process, each
worker with its own fast path on one torch thread, under fork and spawn; pickling."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy
import spacy
import torch
from spacy.language import Language

from spacy_elmo.layers.bilm import get_bilm, get_feature_cache

REPO = Path(__file__).parents[1]
TEXTS = [f"Sentence {i} has {'many ' * (i % 5)}words ." for i in range(24)]


@Language.component("test_record_process")
def record_process(doc):
    doc.user_data["process"] = (os.getpid(), torch.get_num_threads())
    return doc


def pipeline(bilm_dir):
    nlp = spacy.blank("en")
    # No feature cache: forked workers inherit the parent's, and would not run the biLM.
    model = {
        "options_file": str(bilm_dir / "options.json"),
        "weight_file": str(bilm_dir / "weights.hdf5"),
        "cache_mb": 0,
    }
    nlp.add_pipe("elmo", config={"model": model})
    nlp.add_pipe("test_record_process")
    nlp.initialize()
    return nlp


def test_two_processes_give_the_vectors_of_one(tiny_bilm_dir):
    nlp = pipeline(tiny_bilm_dir)
    torch.set_num_threads(1)  # the workers' setting
    single = list(nlp.pipe(TEXTS, batch_size=4))
    # A thread per core in the parent, which forked workers would inherit.
    threads = os.cpu_count() or 2
    torch.set_num_threads(threads)
    double = list(nlp.pipe(TEXTS, batch_size=4, n_process=2))
    assert [d.text for d in double] == TEXTS
    for one, two in zip(single, double):
        numpy.testing.assert_allclose(two._.elmo_layers, one._.elmo_layers, atol=1e-6, rtol=0)
        numpy.testing.assert_allclose(two._.elmo, one._.elmo, atol=1e-6, rtol=0)
    workers = {tuple(d.user_data["process"]) for d in double}
    assert len({pid for pid, _ in workers}) == 2 and os.getpid() not in {pid for pid, _ in workers}
    assert {n for _, n in workers} == {1}
    assert torch.get_num_threads() == threads  # the parent keeps its own setting


def test_pickled_component_predicts_the_same_without_caches(tiny_bilm_dir):
    nlp = pipeline(tiny_bilm_dir)
    elmo = nlp.get_pipe("elmo")
    elmo.model.attrs["feature_cache"].max_bytes = 2**20
    expected = [doc._.elmo_layers for doc in nlp.pipe(TEXTS[:4])]
    assert len(get_feature_cache(elmo.model)) == 4
    restored = pickle.loads(pickle.dumps(elmo))
    assert len(get_feature_cache(restored.model)) == 0 and restored.model.layers[0].shims[0]._model._fast == []
    assert get_bilm(restored.model) is not get_bilm(elmo.model)
    docs = list(restored.pipe(nlp.make_doc(t) for t in TEXTS[:4]))
    assert len(docs) == len(expected) == 4
    for doc, layers in zip(docs, expected):
        numpy.testing.assert_allclose(doc._.elmo_layers, layers, atol=1e-6, rtol=0)  # oneDNN may block differently


SPAWN_SCRIPT = """
import multiprocessing, os, sys
import numpy, spacy, torch
from spacy.language import Language

@Language.component("spawn_record_process")
def record(doc):
    doc.user_data["process"] = (os.getpid(), torch.get_num_threads())
    return doc

if __name__ == "__main__":
    multiprocessing.set_start_method("spawn", force=True)
    nlp = spacy.blank("en")
    model = {"options_file": sys.argv[1] + "/options.json", "weight_file": sys.argv[1] + "/weights.hdf5", "cache_mb": 0}
    nlp.add_pipe("elmo", config={"model": model})
    nlp.add_pipe("spawn_record_process")
    nlp.initialize()
    texts = [f"Sentence {i} has {'many ' * (i % 5)}words ." for i in range(12)]
    torch.set_num_threads(1)  # the workers' setting
    single = list(nlp.pipe(texts, batch_size=3))
    double = list(nlp.pipe(texts, batch_size=3, n_process=2))
    diff = max(float(numpy.abs(a._.elmo_layers - b._.elmo_layers).max()) for a, b in zip(single, double))
    workers = {tuple(d.user_data["process"]) for d in double}
    print(diff, len({p for p, _ in workers}), sorted({n for _, n in workers}))
"""


def test_spawned_workers_unpickle_the_component(tiny_bilm_dir, tmp_path):
    script = tmp_path / "spawn_pipe.py"  # spawn re-imports the main module: it must be a file
    script.write_text(SPAWN_SCRIPT)
    # Without OMP_NUM_THREADS, spawned workers would start a torch thread per core.
    env = {**{k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, str(script), str(tiny_bilm_dir)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    diff, n_workers, threads = result.stdout.split(maxsplit=2)
    assert float(diff) <= 1e-6 and int(n_workers) == 2
    assert threads.strip() == str([1])
