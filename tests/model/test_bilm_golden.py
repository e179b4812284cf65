"""The biLM against the golden outputs of the original TensorFlow code (both fixtures)."""

import json

import h5py
import numpy
import pytest
import torch
from conftest import SHARED_DATA

from spacy_elmo.chars import CharacterIds
from spacy_elmo.formats.allennlp import load_bilm

FIXTURES = SHARED_DATA / "elmo_fixtures"
CASES = {
    "allennlp": (
        "allennlp/options.json",
        "allennlp/lm_weights.hdf5",
        "allennlp/sentences.json",
        "allennlp/lm_embeddings_{}.hdf5",
    ),
    "bilm-tf": (
        "bilm-tf/model/options.json",
        "bilm-tf/model/lm_weights.hdf5",
        "bilm-tf/model/lm_embeddings_sentences.json",
        "bilm-tf/model/lm_embeddings_{}.hdf5",
    ),
}
pytestmark = pytest.mark.skipif(not FIXTURES.exists(), reason="../shared/data/elmo_fixtures is absent")


def _load(case):
    options, weights, sentences, golden = CASES[case]
    model = load_bilm(FIXTURES / options, FIXTURES / weights).eval()
    sentences = json.loads((FIXTURES / sentences).read_text())
    expected = []
    for k in range(3):
        with h5py.File(FIXTURES / golden.format(k), "r") as f:
            expected.append([numpy.concatenate([f[str(i)][0], f[str(i)][1]], axis=-1) for i in range(10)])
    return model, sentences, expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_chained_batches_reproduce_all_golden_outputs(case):
    model, sentences, expected = _load(case)
    chars = CharacterIds()
    state, worst = None, 0.0
    with torch.no_grad():
        for i in range(10):
            batch = [sentences[k][i].split() for k in range(3)]
            out = model(torch.from_numpy(chars.batch(batch)), state)
            state = out.state
            for k, tokens in enumerate(batch):
                got = out.layers[2, k, : len(tokens)].numpy()
                assert got.shape == expected[k][i].shape
                worst = max(worst, float(numpy.abs(got - expected[k][i]).max()))
    assert worst <= 1e-5


@pytest.mark.parametrize("case", sorted(CASES))
def test_stateless_first_batch_matches_and_later_calls_do_not_leak_state(case):
    model, sentences, expected = _load(case)
    chars = CharacterIds()
    batch = [sentences[k][0].split() for k in range(3)]
    ids = torch.from_numpy(chars.batch(batch))
    with torch.no_grad():
        first = model(ids).layers
        model(torch.from_numpy(chars.batch([sentences[k][5].split() for k in range(3)])))
        again = model(ids).layers
    assert torch.equal(first, again)
    for k, tokens in enumerate(batch):
        assert numpy.abs(first[2, k, : len(tokens)].numpy() - expected[k][0]).max() <= 1e-5


def test_layer_layout():
    model, sentences, _ = _load("allennlp")
    tokens = sentences[0][3].split()
    with torch.no_grad():
        out = model(torch.from_numpy(CharacterIds().batch([tokens])))
    P = model.config.projection_dim
    assert out.layers.shape == (3, 1, len(tokens), 2 * P)
    assert torch.equal(out.layers[0, 0, :, :P], out.layers[0, 0, :, P:])
    assert out.state.hidden.shape == (2, 2, 1, P)
    assert out.state.cell.shape == (2, 2, 1, model.config.lstm_dim)


def test_char_cnn_token_embeddings_match():
    model = load_bilm(FIXTURES / "allennlp/options.json", FIXTURES / "allennlp/lm_weights.hdf5").eval()
    words = (FIXTURES / "allennlp/vocab_test.txt").read_text(encoding="utf-8").split("\n")
    with h5py.File(FIXTURES / "allennlp/elmo_token_embeddings.hdf5", "r") as f:
        expected = f["embedding"][...]
    chars = CharacterIds()
    with torch.no_grad():
        got = model.embed_tokens(torch.from_numpy(chars.vocabulary(words))).numpy()
    n = min(len(words), len(expected))
    assert n >= 457
    assert numpy.abs(got[:n] - expected[:n]).max() <= 1e-5
