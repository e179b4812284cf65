"""Thinc layers: the biLM layer against the torch BiLM, the numpy mix against ScalarMix,
the feature cache, sequence splitting and gradients."""

import pickle
from types import SimpleNamespace

import numpy
import pytest
import spacy
import torch
from spacy.tokens import Doc
from thinc.api import Adam

from spacy_elmo.chars import CharacterIds
from spacy_elmo.formats.allennlp import load_bilm
from spacy_elmo.layers import (
    DocLayers,
    ElmoBiLM,
    FeatureCache,
    ScalarMixLayer,
    get_bilm,
    get_feature_cache,
    mix_weights,
)
from spacy_elmo.layers import bilm as bilm_layer_module
from spacy_elmo.layers.sequences import doc_sequences, segment_ids, sequence_ranges
from spacy_elmo.model import ScalarMix

# model.predict runs the fast path (FastBiLM), which equals the exact path within 1e-4 in fp32.
FAST_TOLERANCE = 1e-4
SENTENCES = [
    ["The", "biLM", "reads", "both", "ways", "."],
    ["Short", "one"],
    ["A"],
    ["Another", "sentence", "of", "five", "words"],
]


@pytest.fixture(scope="module")
def vocab():
    return spacy.blank("en").vocab


def _bilm_layer(fixture_dir, **kwargs):
    model = ElmoBiLM(
        options_file=str(fixture_dir / "options.json"), weight_file=str(fixture_dir / "lm_weights.hdf5"), **kwargs
    )
    model.initialize()
    return model


def _reference(fixture_dir, words):
    bilm = load_bilm(fixture_dir / "options.json", fixture_dir / "lm_weights.hdf5").eval()
    with torch.no_grad():
        return bilm(torch.from_numpy(CharacterIds().batch([words]))).layers[:, 0].numpy()


def test_bilm_layer_matches_the_torch_bilm_per_sentence(fixture_dir, vocab):
    # Small batches force several biLM calls with different padding; results must not change.
    model = _bilm_layer(fixture_dir, max_sequence_length=8, max_batch_tokens=8)
    docs = [Doc(vocab, words=words) for words in SENTENCES]
    outputs = model.predict(docs)
    assert len(outputs) == len(SENTENCES)
    for words, output in zip(SENTENCES, outputs):
        assert output.layers.shape == (3, len(words), 32)
        numpy.testing.assert_allclose(output.layers, _reference(fixture_dir, words), atol=FAST_TOLERANCE, rtol=0)
        assert output.segments.tolist() == [0] * len(words)


def test_sentences_are_separate_sequences_and_spaces_are_skipped(fixture_dir, vocab):
    words = ["Short", "one", "  ", "Another", "sentence", "of", "five", "words"]
    doc = Doc(vocab, words=words, sent_starts=[True, False, False, True, False, False, False, False])
    model = _bilm_layer(fixture_dir)
    (output,) = model.predict([doc])
    assert sequence_ranges(doc, 256) == [(0, 3), (3, 8)]
    assert output.segments.tolist() == [0, 0, -1, 1, 1, 1, 1, 1]
    numpy.testing.assert_allclose(
        output.layers[:, :2], _reference(fixture_dir, ["Short", "one"]), atol=FAST_TOLERANCE, rtol=0
    )
    assert not output.layers[:, 2].any()
    numpy.testing.assert_allclose(output.layers[:, 3:], _reference(fixture_dir, words[3:]), atol=FAST_TOLERANCE, rtol=0)


def test_long_docs_are_cut_into_windows(vocab):
    doc = Doc(vocab, words=[f"w{i}" for i in range(10)])
    assert sequence_ranges(doc, 4) == [(0, 4), (4, 8), (8, 10)]
    assert sequence_ranges(doc, 10) == [(0, 10)]
    doc = Doc(vocab, words=[f"w{i}" for i in range(7)], sent_starts=[True, False, False, False, False, True, False])
    assert sequence_ranges(doc, 3) == [(0, 3), (3, 5), (5, 7)]
    assert segment_ids(doc, sequence_ranges(doc, 3)).tolist() == [0, 0, 0, 1, 1, 2, 2]
    assert sequence_ranges(Doc(vocab, words=[]), 3) == []
    assert [s.words for s in doc_sequences(doc, [(0, 2)])] == [("w0", "w1")]
    with pytest.raises(ValueError, match="max_sequence_length must be at least 1"):
        sequence_ranges(doc, 0)


def test_feature_cache_serves_repeated_sequences(fixture_dir, vocab):
    model = _bilm_layer(fixture_dir)
    cache = get_feature_cache(model)
    docs = [Doc(vocab, words=words) for words in SENTENCES]
    first = model.predict(docs)
    assert (cache.hits, cache.misses, len(cache)) == (0, 4, 4)
    second = model.predict(docs)
    assert (cache.hits, cache.misses) == (4, 4)
    for a, b in zip(first, second):
        numpy.testing.assert_array_equal(a.layers, b.layers)
    # Training passes need gradients: the cache is neither read nor written.
    model.begin_update(docs)
    assert (cache.hits, cache.misses) == (4, 4)


def test_feature_cache_is_bounded_and_least_recently_used():
    cache = FeatureCache(max_mb=3 * 4000 / 2**20)  # room for three 1000-float arrays
    arrays = {key: numpy.zeros((1, 10, 100), dtype="float32") for key in [("a",), ("b",), ("c",), ("d",)]}
    for key in [("a",), ("b",), ("c",)]:
        cache.put(key, arrays[key])
    assert cache.get(("a",)) is arrays[("a",)]
    cache.put(("d",), arrays[("d",)])
    assert (len(cache), cache.n_bytes) == (3, 12000)
    assert cache.get(("b",)) is None and cache.get(("a",)) is not None
    cache.put(("big",), numpy.zeros((1, 10, 1000), dtype="float32"))
    assert cache.get(("big",)) is None
    with pytest.raises(ValueError, match=">= 0 MB"):
        FeatureCache(-1)


@pytest.mark.parametrize("layer_norm", [False, True])
def test_mix_layer_matches_torch_scalar_mix_values_and_gradients(layer_norm):
    rng = numpy.random.default_rng(0)
    lengths = [4, 3]
    layers = rng.normal(size=(3, sum(lengths), 5)).astype("float32")
    layers[:, 1] *= 3.0
    segments = numpy.asarray([0] * 4 + [1] * 3)
    mix = ScalarMixLayer(3, gamma=0.7, layer_norm=layer_norm, l2_coef=0.1)
    mix.initialize()
    mix.attrs["need_input_grad"] = True
    mix.set_param("weights", numpy.asarray([0.2, -0.5, 0.1], dtype="float32"))
    (output,), backprop = mix([DocLayers(layers, segments)], is_train=True)
    d_output = rng.normal(size=output.shape).astype("float32")
    (d_layers,) = backprop([d_output])

    # Reference: the torch ScalarMix with each sentence as one padded row of a batch.
    ref = ScalarMix(3, initial_weights=[0.2, -0.5, 0.1], gamma=0.7, layer_norm=layer_norm)
    padded = torch.zeros(3, 2, 4, 5)
    padded[:, 0, :4], padded[:, 1, :3] = torch.from_numpy(layers[:, :4]), torch.from_numpy(layers[:, 4:])
    padded.requires_grad_(True)
    mask = torch.tensor([[True] * 4, [True] * 3 + [False]])
    ref_out = ref(padded, mask)
    ref_flat = torch.cat([ref_out[0, :4], ref_out[1, :3]])
    numpy.testing.assert_allclose(output, ref_flat.detach().numpy(), atol=1e-5)
    loss = (ref_flat * torch.from_numpy(d_output)).sum() + 0.1 * (ref.weights**2).sum()
    loss.backward()
    numpy.testing.assert_allclose(mix.get_grad("weights"), ref.weights.grad.numpy(), atol=1e-5)
    numpy.testing.assert_allclose(mix.get_grad("gamma"), [ref.gamma.grad.item()], atol=1e-5)
    ref_d_layers = torch.cat([padded.grad[:, 0, :4], padded.grad[:, 1, :3]], dim=1)
    numpy.testing.assert_allclose(d_layers, ref_d_layers.numpy(), atol=1e-5)


def test_mix_starts_equal_and_sends_no_gradient_when_frozen():
    mix = ScalarMixLayer(3)
    mix.initialize()
    numpy.testing.assert_allclose(mix_weights(mix), [1 / 3] * 3)
    layers = numpy.ones((3, 2, 4), dtype="float32")
    _, backprop = mix([DocLayers(layers, numpy.zeros(2, dtype="int64"))], is_train=True)
    assert backprop([numpy.ones((2, 4), dtype="float32")]) is None
    assert mix.get_grad("gamma")[0] == pytest.approx(8.0)


def test_bilm_backprop_reaches_the_torch_weights(fixture_dir, vocab):
    model = _bilm_layer(fixture_dir)
    bilm = get_bilm(model)
    before = {name: p.detach().clone() for name, p in bilm.named_parameters()}
    docs = [Doc(vocab, words=words) for words in SENTENCES]
    outputs, backprop = model.begin_update(docs)
    backprop([numpy.ones_like(o.layers) for o in outputs])
    assert bilm.lstm.input_weights[0].grad.abs().sum() > 0
    model.finish_update(Adam(0.01))
    changed = [name for name, p in bilm.named_parameters() if not torch.equal(p.detach(), before[name])]
    assert "lstm.input_weights.0" in changed and "char_encoder.projection.weight" in changed


def test_bilm_layer_config_errors(tmp_path, monkeypatch):
    monkeypatch.setattr("spacy_elmo.formats.packages.entry_points", lambda group: [])  # no biLM package installed
    with pytest.raises(ValueError, match="No biLM given and the default 'en_elmo_small' is not installed"):
        ElmoBiLM().initialize()  # built without one (spacy init fill-config does that); initialized: an error
    with pytest.raises(ValueError, match="got options_file='o.json', preset='tiny'; give one"):
        ElmoBiLM(options_file="o.json", preset="tiny")
    with pytest.raises(ValueError, match="without options_file"):
        ElmoBiLM(preset="tiny", weight_file="w.hdf5")
    with pytest.raises(ValueError, match="max_batch_tokens"):
        ElmoBiLM(preset="tiny", max_sequence_length=100, max_batch_tokens=10)
    model = ElmoBiLM(options_file=str(tmp_path / "missing.json"))  # files are only read by initialize
    with pytest.raises(FileNotFoundError, match="missing.json"):
        model.initialize()
    with pytest.raises(ValueError, match="call nlp.initialize"):
        ElmoBiLM(preset="tiny").predict([])
    with pytest.raises(ValueError, match=r"inference_matmul must be one of \['bf16', 'fp32'\], got 'fp16'"):
        ElmoBiLM(preset="tiny", inference_matmul="fp16")


def test_bf16_inference_matmuls_stay_close_to_fp32(fixture_dir, vocab):
    docs = [Doc(vocab, words=words) for words in SENTENCES]
    fp32 = _bilm_layer(fixture_dir, cache_mb=0).predict(docs)
    bf16 = _bilm_layer(fixture_dir, cache_mb=0, inference_matmul="bf16").predict(docs)
    errors = [numpy.abs(a.layers - b.layers).max() for a, b in zip(fp32, bf16)]
    assert 0 < max(errors) < 2e-2


def test_preset_gives_a_fresh_model(vocab):
    model = ElmoBiLM(preset="tiny")
    model.initialize()
    (output,) = model.predict([Doc(vocab, words=["a", "b"])])
    assert output.layers.shape == (3, 2, 128)


def test_options_without_weights_warn_that_the_biLM_is_random(fixture_dir, vocab):
    model = ElmoBiLM(options_file=str(fixture_dir / "options.json"))
    with pytest.warns(UserWarning, match="without weight_file gives a biLM with random weights.*--paths.elmo_weights"):
        model.initialize()


def test_a_copy_keeps_torch_threads_and_a_worker_process_runs_one(fixture_dir, vocab, monkeypatch):
    """thinc's Shim.copy (nlp.replace_listeners) pickles the holder: in the same process the
    copy leaves torch's threads alone; unpickled in another process it runs torch on one."""
    calls = []
    monkeypatch.setattr(bilm_layer_module.torch, "set_num_threads", calls.append)
    monkeypatch.setattr(bilm_layer_module, "process_governor", lambda: SimpleNamespace(update=lambda: 1))
    copy = _bilm_layer(fixture_dir).copy()
    copy.predict([Doc(vocab, words=["a", "b"])])
    assert calls == []
    worker = pickle.loads(pickle.dumps(copy))
    monkeypatch.setattr(bilm_layer_module.os, "getpid", lambda: -2)
    worker.predict([Doc(vocab, words=["a", "b"])])
    assert calls == [1]


def test_elmo_tok2vec_with_a_bilstm_encoder_over_a_standalone_bilm(fixture_dir, vocab):
    config = {
        "@architectures": "spacy-elmo.ElmoTok2Vec.v1",
        "width": 24,
        "embed": {"@architectures": "spacy.MultiHashEmbed.v2", "width": 24, "attrs": ["NORM"], "rows": [100], "include_static_vectors": False},
        "elmo": {"@architectures": "spacy-elmo.ElmoEmbed.v1", "bilm": {"@architectures": "spacy-elmo.ElmoBiLM.v1", "options_file": str(fixture_dir / "options.json"), "weight_file": str(fixture_dir / "lm_weights.hdf5")}, "dropout": 0.2},
        "encode": {"@architectures": "spacy.TorchBiLSTMEncoder.v1", "width": 24, "depth": 1, "dropout": 0.0},
    }  # fmt: skip
    model = spacy.registry.resolve({"model": config})["model"]
    docs = [Doc(vocab, words=words) for words in SENTENCES]
    model.initialize(X=docs)
    outputs, backprop = model.begin_update(docs)
    assert [o.shape for o in outputs] == [(len(w), 24) for w in SENTENCES]
    backprop([numpy.ones_like(o) for o in outputs])
    (mix,) = [node for node in model.walk() if node.name == "elmo_scalar_mix"]
    assert mix.get_grad("weights").any()
    assert get_bilm(model.get_ref("elmo").layers[0].layers[0]).lstm.input_weights[0].grad is None  # frozen
