"""No stale vectors: after any change of the biLM weights, the fast path, the token-vector
cache and the feature cache give the exact path's output on the current weights."""

import numpy
import pytest
import spacy
import torch
from spacy.tokens import Doc
from thinc.api import SGD, fix_random_seed, torch2xp, xp2torch

from spacy_elmo.layers import ElmoBiLM, get_bilm
from spacy_elmo.model import BiLM, preset

TOLERANCE = 1e-4
SENTENCES = [["The", "biLM", "reads", "both", "ways", "."], ["Short", "one"], ["the", "biLM", "again"]]


@pytest.fixture()
def layer():
    fix_random_seed(0)
    model = ElmoBiLM(preset="tiny")
    model.initialize()
    return model


def _docs():
    vocab = spacy.blank("en").vocab
    return [Doc(vocab, words=words) for words in SENTENCES]


def _assert_current(model, docs):
    """model.predict (fast path and caches) equals the exact path on the current weights."""
    predicted = model.predict(docs)
    exact, _ = model.begin_update(docs)  # a training pass: exact path, no cache
    for got, want in zip(predicted, exact):
        assert numpy.abs(got.layers - want.layers).max() <= TOLERANCE


def _warm(model, docs):
    """Fill the feature cache, the fast path's token-vector cache and its reordered weights."""
    before = model.predict(docs)
    _assert_current(model, docs)
    return before


def _changed(before, model, docs):
    return max(numpy.abs(a.layers - b.layers).max() for a, b in zip(before, model.predict(docs)))


def test_optimizer_step_through_numpy_views(layer):
    # thinc's PyTorchShim.finish_update: the optimizer writes through numpy views of the
    # parameters and reassigns .data over the same memory; torch's version counters and data
    # pointers do not change.
    docs = _docs()
    before = _warm(layer, docs)
    outputs, backprop = layer.begin_update(docs)
    backprop([numpy.ones_like(output.layers) for output in outputs])
    layer.finish_update(SGD(0.5))
    _assert_current(layer, docs)
    assert _changed(before, layer, docs) > 1e-2


def test_parameters_swapped_in_by_use_params_and_back(layer):
    # Model.use_params (how spaCy scores with parameter averages): thinc's PyTorchShim loads the
    # given state dict for the duration of the block and the backup afterwards.
    docs = _docs()
    current = _warm(layer, docs)
    shim = layer.layers[0].shims[0]
    swapped = {f"pytorch_{shim.id}_{name}": torch2xp(p.detach() * 1.2) for name, p in shim._model.state_dict().items()}
    with layer.use_params(swapped):
        _assert_current(layer, docs)
        assert _changed(current, layer, docs) > 1e-2
    _assert_current(layer, docs)
    assert _changed(current, layer, docs) <= TOLERANCE


def test_writes_through_data_are_seen_after_mark_weights_changed(layer):
    docs = _docs()
    before = _warm(layer, docs)
    bilm = get_bilm(layer)
    for p in bilm.parameters():  # the reproduction: same memory, no version bump
        arr = torch2xp(p.data)
        arr += 0.05 * numpy.sign(arr + 1e-3)
        p.data = xp2torch(arr, requires_grad=True)
    bilm.mark_weights_changed()
    _assert_current(layer, docs)
    assert _changed(before, layer, docs) > 1e-2


@pytest.mark.parametrize("change", ["in_place", "new_data", "load_state_dict", "dtype_round_trip"])
def test_torch_side_changes(layer, change):
    docs = _docs()
    before = _warm(layer, docs)
    bilm = get_bilm(layer)
    if change == "in_place":
        with torch.no_grad():
            for p in bilm.parameters():
                p.mul_(1.2)
    elif change == "new_data":
        for p in bilm.parameters():
            p.data = p.data * 1.2
    elif change == "load_state_dict":
        torch.manual_seed(1)
        bilm.load_state_dict(BiLM(preset("tiny")).state_dict())
    else:  # a device/dtype move and back, with the weights changed in float64 in between
        version = bilm.weights_version
        bilm.double()
        assert bilm.weights_version != version
        with torch.no_grad():
            for p in bilm.parameters():
                p.data = p.data * 1.2
        bilm.float()
    _assert_current(layer, docs)
    assert _changed(before, layer, docs) > 1e-2


def test_from_disk_and_from_bytes_replace_cached_features(tmp_path):
    text = "Peter Blackburn met the European Commission in Brussels ."
    pipelines = []
    for seed in (0, 1):
        fix_random_seed(seed)
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config={"model": {"preset": "tiny"}})
        nlp.initialize()
        pipelines.append(nlp)
    a, b = pipelines
    a.to_disk(tmp_path / "a")
    expected = a(text)._.elmo_layers
    b_before = b(text)._.elmo_layers
    assert numpy.abs(b_before - expected).max() > 0.1
    b.from_disk(tmp_path / "a")
    numpy.testing.assert_allclose(b(text)._.elmo_layers, expected, atol=TOLERANCE)
    numpy.testing.assert_allclose(spacy.load(tmp_path / "a")(text)._.elmo_layers, expected, atol=TOLERANCE)
    # and back, through bytes
    fix_random_seed(1)
    c = spacy.blank("en")
    c.add_pipe("elmo", config={"model": {"preset": "tiny"}})
    c.initialize()
    numpy.testing.assert_allclose(c(text)._.elmo_layers, b_before, atol=TOLERANCE)
    c.get_pipe("elmo").from_bytes(a.get_pipe("elmo").to_bytes())
    numpy.testing.assert_allclose(c(text)._.elmo_layers, expected, atol=TOLERANCE)
