"""The `elmo` component: the user contract, Doc/Token/Span extensions, sentences, edge-case
Docs, memory on a 100k-token Doc, DocBin/pickle and disk round trips."""

import pickle
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_elmo.layers import get_feature_cache

# Predictions run the fast path, within 1e-4 of the exact path in fp32: two runs over
# different batches (another padding, other neighbours) agree to that, not to rounding.
FAST_TOLERANCE = 1e-4


def _nlp(fixture_dir, **config):
    nlp = spacy.blank("en")
    model = {"options_file": str(fixture_dir / "options.json"), "weight_file": str(fixture_dir / "lm_weights.hdf5")}
    model.update(config.pop("model", {}))
    nlp.add_pipe("elmo", config={"model": model, **config})
    nlp.initialize()
    return nlp


@pytest.fixture(scope="module")
def nlp(fixture_dir):
    return _nlp(fixture_dir)


def test_user_contract_shapes_and_types(nlp):
    doc = nlp("The biLM reads the sentence both ways.")
    assert doc._.elmo_layers.shape == (3, len(doc), 32)
    assert doc._.elmo.shape == (len(doc), 32)
    for value in (doc._.elmo_layers, doc._.elmo, doc[0]._.elmo, doc[1:3]._.elmo):
        assert isinstance(value, numpy.ndarray) and value.dtype == numpy.float32
    assert doc._.elmo_sequences == [(0, len(doc))]


def test_doc_token_span_consistency(nlp):
    doc = nlp("Peter Blackburn lives in Brussels.")
    numpy.testing.assert_allclose(doc._.elmo, doc._.elmo_layers.mean(axis=0), atol=1e-6)  # equal weights, gamma 1
    for token in doc:
        numpy.testing.assert_array_equal(token._.elmo, doc._.elmo[token.i])
    numpy.testing.assert_allclose(doc[0:2]._.elmo, (doc[0]._.elmo + doc[1]._.elmo) / 2, atol=1e-6)
    numpy.testing.assert_array_equal(doc[2:2]._.elmo, numpy.zeros(32, dtype="float32"))
    # Layer 0 is the context-insensitive token vector, twice: [x; x].
    numpy.testing.assert_array_equal(doc._.elmo_layers[0, :, :16], doc._.elmo_layers[0, :, 16:])


def test_own_mix_weights_gamma_and_layer_norm(fixture_dir, nlp):
    text = "The biLM reads the sentence both ways."
    layers = nlp(text)._.elmo_layers
    top = _nlp(fixture_dir, layer_weights=[0.0, 0.0, 1.0], gamma=2.0)(text)
    numpy.testing.assert_allclose(top._.elmo, 2.0 * layers[2], atol=1e-6)
    normed = _nlp(fixture_dir, layer_norm=True)(text)._.elmo
    expected = ((layers - layers.mean(axis=(1, 2), keepdims=True)) / layers.std(axis=(1, 2), keepdims=True)).mean(
        axis=0
    )
    numpy.testing.assert_allclose(normed, expected, atol=1e-4)
    with pytest.raises(ValueError, match="give one weight per layer"):
        _nlp(fixture_dir, layer_weights=[1.0])("a b")


def test_only_the_mix_and_doc_tensor_options(fixture_dir, nlp):
    doc = _nlp(fixture_dir, store_layers=False, set_doc_tensor=True)("Short sentence here.")
    assert doc._.elmo_layers is None
    numpy.testing.assert_array_equal(doc.tensor, doc._.elmo)
    numpy.testing.assert_allclose(doc._.elmo, nlp("Short sentence here.")._.elmo, atol=1e-6)


def test_each_sentence_is_its_own_bilm_sequence(nlp):
    words = ["EU", "rejects", "it", ".", "Peter", "Blackburn", "agrees", "."]
    doc = Doc(nlp.vocab, words=words, sent_starts=[True, False, False, False, True, False, False, False])
    doc = nlp(doc)
    assert doc._.elmo_sequences == [(0, 4), (4, 8)]
    second_alone = nlp(Doc(nlp.vocab, words=words[4:]))
    numpy.testing.assert_allclose(doc._.elmo_layers[:, 4:], second_alone._.elmo_layers, atol=FAST_TOLERANCE, rtol=0)
    whole = nlp(Doc(nlp.vocab, words=words))
    assert not numpy.allclose(whole._.elmo_layers[2, 4:], second_alone._.elmo_layers[2])


def test_docs_without_sentences_are_cut_into_windows(fixture_dir):
    nlp = _nlp(fixture_dir, model={"max_sequence_length": 3, "max_batch_tokens": 6})
    doc = nlp(" ".join(f"w{i}" for i in range(8)))
    assert doc._.elmo_sequences == [(0, 3), (3, 6), (6, 8)]
    window = nlp(Doc(nlp.vocab, words=["w3", "w4", "w5"]))
    numpy.testing.assert_allclose(doc._.elmo_layers[:, 3:6], window._.elmo_layers, atol=FAST_TOLERANCE, rtol=0)


@pytest.mark.parametrize("text,n_tokens", [("", 0), ("Hello", 1), ("   ", 1), ("a  b \n\n c", 5)])
def test_empty_single_and_whitespace_docs(nlp, text, n_tokens):
    doc = nlp(text)
    assert len(doc) == n_tokens
    assert doc._.elmo_layers.shape == (3, n_tokens, 32)
    assert doc._.elmo.shape == (n_tokens, 32)
    assert numpy.isfinite(doc._.elmo_layers).all()
    for token in doc:
        assert token._.elmo.any() != token.is_space  # whitespace tokens are skipped: zero vectors
    if n_tokens == 0:
        assert doc._.elmo_sequences == []
        assert doc[0:0]._.elmo.shape == (32,)


def test_whitespace_tokens_do_not_change_their_neighbours(nlp):
    spaced = nlp("a  b \n\n c")
    plain = nlp(Doc(nlp.vocab, words=["a", "b", "c"]))
    kept = [t.i for t in spaced if not t.is_space]
    numpy.testing.assert_allclose(spaced._.elmo_layers[:, kept], plain._.elmo_layers, atol=FAST_TOLERANCE, rtol=0)


def test_pipe_batches_give_the_same_vectors_as_single_docs(nlp):
    texts = ["One sentence.", "Another, longer sentence with more words.", "", "Third"]
    docs = list(nlp.pipe(texts, batch_size=3))
    assert [doc.text for doc in docs] == texts
    for doc, text in zip(docs, texts):
        numpy.testing.assert_allclose(doc._.elmo_layers, nlp(text)._.elmo_layers, atol=FAST_TOLERANCE, rtol=0)


def test_pickle_and_docbin(nlp):
    doc = nlp("Pickled ELMo vectors travel with the Doc.")
    restored = pickle.loads(pickle.dumps(doc))
    numpy.testing.assert_array_equal(restored._.elmo_layers, doc._.elmo_layers)
    numpy.testing.assert_array_equal(restored[1]._.elmo, doc[1]._.elmo)
    numpy.testing.assert_array_equal(Doc(nlp.vocab).from_bytes(doc.to_bytes())._.elmo_layers, doc._.elmo_layers)
    # DocBin keeps extension data only with store_user_data=True (it lives in doc.user_data).
    kept = list(DocBin(docs=[doc], store_user_data=True).get_docs(nlp.vocab))[0]
    numpy.testing.assert_array_equal(kept._.elmo_layers, doc._.elmo_layers)
    numpy.testing.assert_array_equal(kept._.elmo, doc._.elmo)
    assert list(kept._.elmo_sequences) == doc._.elmo_sequences  # msgpack gives tuples
    dropped = list(DocBin(docs=[doc]).get_docs(nlp.vocab))[0]
    assert dropped._.elmo_layers is None and dropped._.elmo is None


def test_disk_round_trip_needs_no_weight_files(fixture_dir, tmp_path):
    copy = tmp_path / "weights"
    copy.mkdir()
    for name in ("options.json", "lm_weights.hdf5"):
        shutil.copy(fixture_dir / name, copy / name)
    nlp = _nlp(copy, layer_norm=True)
    text = "The saved pipeline keeps its own weights."
    expected = nlp(text)
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(copy)
    loaded = spacy.load(tmp_path / "pipeline")
    doc = loaded(text)
    numpy.testing.assert_array_equal(doc._.elmo_layers, expected._.elmo_layers)
    numpy.testing.assert_array_equal(doc._.elmo, expected._.elmo)
    assert loaded.get_pipe("elmo").cfg["layer_norm"] is True
    loaded.initialize()  # re-initialising keeps the stored weights: the files are gone
    numpy.testing.assert_array_equal(loaded(text)._.elmo_layers, expected._.elmo_layers)
    reloaded = spacy.blank("en").from_config(loaded.config)
    reloaded.from_bytes(loaded.to_bytes())
    numpy.testing.assert_array_equal(reloaded(text)._.elmo_layers, expected._.elmo_layers)


def test_missing_model_settings_name_the_fix(monkeypatch):
    monkeypatch.setattr("spacy_elmo.formats.packages.entry_points", lambda group: [])  # no biLM package installed
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo")
    with pytest.raises(
        ValueError, match="not installed. Give one as model.bilm .* or as model.options_file \\+ model.weight_file"
    ):
        nlp.initialize()


def test_prediction_fills_the_feature_cache(fixture_dir):
    nlp = _nlp(fixture_dir)
    cache = get_feature_cache(nlp.get_pipe("elmo").model)
    nlp("Repeated text.")
    nlp("Repeated text.")
    assert (cache.misses, cache.hits) == (1, 1)


MEMORY_SCRIPT = """
import resource, sys, time
import spacy, torch
torch.set_num_threads(1)  # the check is about memory; one thread avoids contention on shared CI cores
from spacy.tokens import Doc
nlp = spacy.blank("en")
nlp.add_pipe("elmo", config={"model": {"options_file": sys.argv[1], "weight_file": sys.argv[2], "cache_mb": 0}})
nlp.initialize()
nlp("Warm up the model once.")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
words = [("word%d" % (i % 5000)) if i % 20 else "." for i in range(100_000)]
start = time.time()
doc = nlp(Doc(nlp.vocab, words=words))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert doc._.elmo_layers.shape == (3, 100_000, 32)
print(len(doc), len(doc._.elmo_sequences), (after - before) / 1024, time.time() - start)
"""


def test_100k_token_doc_runs_in_bounded_memory(fixture_dir):
    """A 100k-token Doc without sentences runs as 256-token windows. Its output alone is
    3 x 100k x 32 float32 = 38 MB (layers) + 13 MB (mix); the bound allows that plus the
    biLM's working memory for one batch of at most max_batch_tokens tokens."""
    result = subprocess.run(
        [sys.executable, "-c", MEMORY_SCRIPT, str(fixture_dir / "options.json"), str(fixture_dir / "lm_weights.hdf5")],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stderr
    n_tokens, n_sequences, peak_growth_mb, seconds = result.stdout.split()
    assert (int(n_tokens), int(n_sequences)) == (100_000, 391)  # ceil(100000 / 256) windows
    print(f"100k-token Doc: peak RSS growth {float(peak_growth_mb):.0f} MB in {float(seconds):.1f} s")
    assert float(peak_growth_mb) < 400


def test_vectors_of_a_retokenized_doc_name_the_cause_instead_of_shifting(nlp):
    doc = nlp("New York is big.")
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[0:2])
    for get in (lambda: doc[1]._.elmo, lambda: doc[0:2]._.elmo):
        with pytest.raises(
            ValueError, match=r"doc._.elmo holds 5 token\(s\) but the Doc now has 4: it was retokenized"
        ):
            get()
    again = nlp.get_pipe("elmo")(doc)
    assert again[1]._.elmo.shape == (32,)


def test_threads_sharing_one_pipeline_get_the_vectors_of_their_own_docs(fixture_dir):
    nlp = _nlp(fixture_dir, model={"cache_mb": 0})
    texts = [f"Sentence {i} has {'quite ' * (i % 9)}a few words." for i in range(24)]
    expected = [nlp(text)._.elmo for text in texts]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda text: nlp(text)._.elmo, texts * 4))
    for want, vectors in zip(expected * 4, got):
        numpy.testing.assert_allclose(vectors, want, atol=FAST_TOLERANCE)
