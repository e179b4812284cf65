"""ELMo listeners and ElmoEmbed: grad_factor scales the gradient that reaches the biLM, the
gradients of several trainable listeners add up, ElmoEmbed fine-tunes its own biLM, and the
listener's errors name the problem."""

from typing import Dict, List, Optional, Sequence

import numpy
import pytest
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import SGD, Model, fix_random_seed, set_dropout_rate

from spacy_elmo.layers import ElmoBiLM, ElmoEmbed, get_bilm
from spacy_elmo.model import BiLM

SENTENCES = [["The", "biLM", "reads", "both", "ways", "."], ["Short", "one"], ["the", "biLM", "again"]]
WIDTH = 128  # the tiny preset's output: 2 x projection_dim 64
Grads = Dict[str, Optional[torch.Tensor]]


def _examples(nlp: Language) -> List[Example]:
    return [
        Example.from_dict(Doc(nlp.vocab, words=words), {"cats": {"A": float(i % 2), "B": float(1 - i % 2)}})
        for i, words in enumerate(SENTENCES)
    ]


def _textcat(grad_factor: float) -> Dict:
    listener = {"@architectures": "spacy-elmo.ElmoListener.v1", "upstream": "elmo", "grad_factor": grad_factor}
    return {
        "@architectures": "spacy.TextCatReduce.v1", "exclusive_classes": True, "use_reduce_first": False, "use_reduce_last": False,
        "use_reduce_max": False, "use_reduce_mean": True, "nO": None, "tok2vec": listener,
    }  # fmt: skip


def _pipeline(grad_factors: Sequence[float]) -> Language:
    """`elmo` (tiny preset, the same weights every time) and one textcat per listener."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"preset": "tiny"}})
    for i, factor in enumerate(grad_factors):
        nlp.add_pipe("textcat", name=f"textcat_{i}", config={"model": _textcat(factor)})
    nlp.initialize(lambda: _examples(nlp))
    _reset_weights(get_bilm(nlp.get_pipe("elmo").model))
    return nlp


def _reset_weights(bilm: BiLM) -> None:
    """The weights of a BiLM built after torch.manual_seed(0), whatever ran before."""
    torch.manual_seed(0)
    bilm.load_state_dict(BiLM(bilm.config).state_dict())


def _upstream(vectors: List[numpy.ndarray], seed: int) -> List[numpy.ndarray]:
    rng = numpy.random.default_rng(seed)
    return [rng.normal(size=v.shape).astype("float32") for v in vectors]


def _grads(bilm: torch.nn.Module) -> Grads:
    return {name: None if p.grad is None else p.grad.detach().clone() for name, p in bilm.named_parameters()}


def _listener_grads(nlp: Language) -> Grads:
    """The biLM's gradient after one training batch through Elmo.update and every listener,
    each with its own upstream gradient; no optimizer, so it stays in p.grad."""
    elmo = nlp.get_pipe("elmo")
    bilm = get_bilm(elmo.model)
    bilm.zero_grad(set_to_none=True)
    examples = _examples(nlp)
    elmo.update(examples)
    docs = [eg.predicted for eg in examples]
    for k, listener in enumerate(elmo.listeners):
        vectors, backprop = listener.begin_update(docs)
        backprop(_upstream(vectors, seed=k))
    return _grads(bilm)


def _assert_close(got: Grads, want: Grads, rtol: float) -> None:
    assert set(got) == set(want)
    for name, w in want.items():
        assert w is not None and got[name] is not None, name
        scale = w.abs().max().item()
        assert scale > 0, name
        assert (got[name] - w).abs().max().item() <= rtol * scale, name


def _scaled(grads: Grads, factor: float) -> Grads:
    return {name: factor * g for name, g in grads.items()}


def test_listener_grad_factor_scales_the_bilm_gradient():
    full = _listener_grads(_pipeline([1.0]))
    _assert_close(_listener_grads(_pipeline([0.5])), _scaled(full, 0.5), rtol=1e-6)
    assert all(g is None for g in _listener_grads(_pipeline([0.0])).values()), "grad_factor 0 is frozen"


def test_two_trainable_listeners_add_their_gradients():
    first = _listener_grads(_pipeline([1.0, 0.0]))
    second = _listener_grads(_pipeline([0.0, 0.5]))
    both = _listener_grads(_pipeline([1.0, 0.5]))
    _assert_close(both, {name: first[name] + second[name] for name in first}, rtol=1e-5)
    difference = max((both[name] - first[name]).abs().max().item() / first[name].abs().max().item() for name in first)
    assert difference > 1e-2, "the second listener's gradient is missing"


@pytest.mark.parametrize("grad_factor", [0.0, 1.0])
def test_listener_releases_the_stored_batch_after_its_backprop(grad_factor):
    nlp = _pipeline([grad_factor])
    elmo = nlp.get_pipe("elmo")
    (listener,) = elmo.listeners
    examples = _examples(nlp)
    elmo.update(examples)
    assert listener._outputs is not None
    vectors, backprop = listener.begin_update([eg.predicted for eg in examples])
    assert listener._outputs is not None  # kept until the backprop: another listener call may need it
    backprop(_upstream(vectors, seed=0))
    assert listener._batch_id is None and listener._outputs is None and listener._backprop is None


def test_listener_rejects_another_batch_than_the_elmo_components():
    nlp = _pipeline([1.0])
    elmo = nlp.get_pipe("elmo")
    (listener,) = elmo.listeners
    examples = _examples(nlp)
    elmo.update(examples[:2])
    with pytest.raises(
        ValueError, match=r"ElmoListener got a batch \(id \d+\) other than the one the 'elmo' component last ran on"
    ):
        listener.begin_update([eg.predicted for eg in examples[1:]])


def test_listener_without_layers_for_a_training_doc_names_the_fix():
    nlp = _pipeline([1.0])
    (listener,) = nlp.get_pipe("elmo").listeners
    doc = Doc(nlp.vocab, words=["never", "seen", "by", "elmo"])
    with pytest.raises(ValueError, match="ElmoListener found no ELMo layers for a training Doc.*store_layers = true"):
        listener.begin_update([doc])
    # Predicting (e.g. before the upstream ran): zero vectors of the right shape, no error.
    (vectors,) = listener.predict([doc])
    assert vectors.shape == (4, WIDTH) and not vectors.any()
    # With the layers stored on the Doc, the listener reads them.
    annotated = nlp.get_pipe("elmo")(Doc(nlp.vocab, words=["seen", "by", "elmo"]))
    (vectors,), _ = listener.begin_update([annotated])
    numpy.testing.assert_allclose(vectors, annotated._.elmo_layers.mean(axis=0), atol=1e-5)


def test_listener_on_a_doc_retokenized_after_elmo_names_the_cause():
    nlp = _pipeline([1.0])
    (listener,) = nlp.get_pipe("elmo").listeners
    doc = nlp.get_pipe("elmo")(Doc(nlp.vocab, words=["New", "York", "is", "big"]))
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[0:2])
    for run in (listener.predict, listener.begin_update):
        with pytest.raises(
            ValueError, match=r"doc._.elmo_layers holds 4 token\(s\) but the Doc now has 3.*before 'elmo'"
        ):
            run([doc])


def _embed(grad_factor: float) -> Model:
    fix_random_seed(0)
    model = ElmoEmbed(ElmoBiLM(preset="tiny"), grad_factor=grad_factor)
    model.initialize(X=_docs())
    _reset_weights(_embed_bilm(model))
    return model


def _embed_layer(model: Model) -> Model:
    """The ElmoBiLM.v1 layer inside ElmoEmbed.v1: chain(grad factor(biLM), head)."""
    return model.layers[0].layers[0]


def _embed_bilm(model: Model) -> torch.nn.Module:
    return get_bilm(_embed_layer(model))


def _docs() -> List[Doc]:
    vocab = spacy.blank("en").vocab
    return [Doc(vocab, words=words) for words in SENTENCES]


def _embed_grads(model: Model) -> Grads:
    vectors, backprop = model.begin_update(_docs())
    backprop(_upstream(vectors, seed=0))
    return _grads(_embed_bilm(model))


def test_elmo_embed_grad_factor_scales_the_bilm_gradient():
    full = _embed_grads(_embed(1.0))
    _assert_close(_embed_grads(_embed(0.5)), _scaled(full, 0.5), rtol=1e-6)
    assert all(g is None for g in _embed_grads(_embed(0.0)).values()), "grad_factor 0 is frozen"


def test_elmo_embed_fine_tunes_its_biLM_and_predicts_with_the_new_weights():
    model = _embed(1.0)
    docs = _docs()
    before = model.predict(docs)  # fills the feature cache and the fast path's caches
    bilm = _embed_bilm(model)
    weights = {name: p.detach().clone() for name, p in bilm.named_parameters()}
    vectors, backprop = model.begin_update(docs)
    backprop(_upstream(vectors, seed=0))
    model.finish_update(SGD(0.5))
    changed = [name for name, p in bilm.named_parameters() if not torch.equal(p.detach(), weights[name])]
    assert "lstm.input_weights.0" in changed and "char_encoder.projection.weight" in changed
    after = model.predict(docs)
    assert max(numpy.abs(a - b).max() for a, b in zip(before, after)) > 1e-2
    # The exact path on the new weights (a training pass: no cache), through the same head.
    exact, _ = _embed_layer(model).begin_update(docs)
    expected = model.layers[1].predict(exact)
    for got, want in zip(after, expected):
        numpy.testing.assert_allclose(got, want, atol=1e-4, rtol=0)


def test_replaced_listener_fine_tunes_a_copy_of_the_bilm():
    nlp = _pipeline([1.0])
    elmo = nlp.get_pipe("elmo")
    shared = {name: p.detach().clone() for name, p in get_bilm(elmo.model).named_parameters()}
    layers_before = elmo(Doc(nlp.vocab, words=SENTENCES[0]))._.elmo_layers
    nlp.replace_listeners("elmo", "textcat_0", ["model.tok2vec"])
    (grad_factor,) = [node for node in nlp.get_pipe("textcat_0").model.walk() if node.name == "elmo_grad_factor"]
    (model,) = [
        node for node in nlp.get_pipe("textcat_0").model.walk() if node.layers and node.layers[0] is grad_factor
    ]
    own = get_bilm(grad_factor.layers[0])
    assert own is not get_bilm(elmo.model)
    docs = _docs()
    vectors, backprop = model.begin_update(docs)
    backprop(_upstream(vectors, seed=0))
    model.finish_update(SGD(0.5))
    assert any(not torch.equal(p.detach(), shared[name]) for name, p in own.named_parameters()), "the copy did not move"
    for name, p in get_bilm(elmo.model).named_parameters():
        assert torch.equal(p.detach(), shared[name]), name
    numpy.testing.assert_array_equal(elmo(Doc(nlp.vocab, words=SENTENCES[0]))._.elmo_layers, layers_before)
    # The copy predicts with its new weights: its fast path and caches equal its exact path.
    predicted = grad_factor.layers[0].predict(docs)
    exact, _ = grad_factor.layers[0].begin_update(docs)
    for got, want in zip(predicted, exact):
        numpy.testing.assert_allclose(got.layers, want.layers, atol=1e-4, rtol=0)


@pytest.mark.parametrize("rate", [0.0, 0.5])
def test_listener_dropout_keeps_its_own_rate_when_spacy_sets_the_training_dropout(rate):
    """spaCy's update sets [training] dropout on every layer with a "dropout_rate" attr; the
    listener's own rate must be the one applied to the mixed vectors, and none at prediction."""
    from spacy_elmo.layers import ElmoListenerV1

    listener = ElmoListenerV1(upstream="elmo", dropout=rate)
    set_dropout_rate(listener, 0.1)
    dropout = next(node for node in listener.walk() if node.name == "elmo_dropout")
    vectors = [numpy.ones((2000, 16), dtype="f"), numpy.ones((5, 16), dtype="f")]
    dropped, backprop = dropout(vectors, is_train=True)
    zeroed = float((dropped[0] == 0).mean())
    assert abs(zeroed - rate) < 0.02, f"dropped {zeroed:.3f} of the values, the listener's rate is {rate}"
    numpy.testing.assert_allclose(dropped[0][dropped[0] != 0], 1 / (1 - rate))
    d_vectors = backprop([numpy.ones_like(v) for v in vectors])
    numpy.testing.assert_array_equal(d_vectors[0], dropped[0])  # the same mask backwards
    predicted, _ = dropout(vectors, is_train=False)
    numpy.testing.assert_array_equal(predicted[0], vectors[0])


def test_listener_dropout_out_of_range_names_the_setting():
    from spacy_elmo.layers import ElmoListenerV1

    with pytest.raises(ValueError, match=r"listener's dropout must be in \[0, 1\), not 1.5"):
        ElmoListenerV1(upstream="elmo", dropout=1.5)
