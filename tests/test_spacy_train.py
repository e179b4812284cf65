"""Training: `spacy train` with the NER config, per-task mixes, the frozen biLM and its
feature cache, fine-tuning with grad_factor > 0, and nlp.replace_listeners."""

import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
import spacy.ty
import torch
from project_scripts import load_script
from spacy.training import Example
from spacy.util import minibatch
from thinc.api import fix_random_seed

from spacy_elmo.layers import find_mixes, get_bilm, get_feature_cache, learned_mix

REPO = Path(__file__).parents[1]


def test_iob1_conversion():
    convert = load_script("convert_conll")
    assert convert.iob1_to_iob2(["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG"]) == [
        "B-PER",
        "I-PER",
        "O",
        "B-LOC",
        "B-LOC",
        "B-ORG",
    ]


def test_spacy_train_with_the_ner_config(fixture_dir, conll_dir, tmp_path):
    convert = load_script("convert_conll")
    train = convert.conll_to_docbin(conll_dir / "eng.train", limit=100)
    assert len(train) == 100
    train.to_disk(tmp_path / "train.spacy")
    convert.conll_to_docbin(conll_dir / "eng.testa", limit=30).to_disk(tmp_path / "dev.spacy")
    first = next(train.get_docs(spacy.blank("en").vocab))
    assert [(e.text, e.label_) for e in first.ents] == [("EU", "ORG"), ("German", "MISC"), ("British", "MISC")]
    command = [
        sys.executable, "-m", "spacy", "train", str(REPO / "project" / "configs" / "ner_elmo.cfg"),
        "--output", str(tmp_path / "out"),
        "--paths.train", str(tmp_path / "train.spacy"), "--paths.dev", str(tmp_path / "dev.spacy"),
        "--paths.elmo_options", str(fixture_dir / "options.json"), "--paths.elmo_weights", str(fixture_dir / "lm_weights.hdf5"),
        "--training.max_steps", "20", "--training.eval_frequency", "10",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # one torch thread: no contention on shared CI cores
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800, cwd=REPO, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    nlp = spacy.load(tmp_path / "out" / "model-last")
    (mix,) = find_mixes(nlp.get_pipe("ner").model)
    weights, gamma = learned_mix(mix)
    assert weights.sum() == pytest.approx(1.0, abs=1e-6)
    assert numpy.abs(weights - 1 / 3).max() > 1e-4 or abs(gamma - 1.0) > 1e-4, "the mix did not move"
    print(f"learned NER mix after 20 steps: weights {weights.round(4)}, gamma {gamma:.4f}")


def _examples(nlp, conll_dir, n):
    convert = load_script("convert_conll")
    examples = []
    for words, tags in convert.read_conll2003(conll_dir / "eng.train", limit=n):
        doc = spacy.tokens.Doc(nlp.vocab, words=words)
        has_person = any(tag.endswith("PER") for tag in tags)
        examples.append(
            Example.from_dict(
                doc, {"entities": tags, "cats": {"PER": float(has_person), "NONE": float(not has_person)}}
            )
        )
    return examples


def _listener(grad_factor=0.0, **settings):
    return {"@architectures": "spacy-elmo.ElmoListener.v1", "upstream": "elmo", "grad_factor": grad_factor, **settings}


def _shared_nlp(fixture_model, ner_grad_factor=0.0, textcat=True):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": fixture_model})
    ner_model = {
        "@architectures": "spacy.TransitionBasedParser.v2", "state_type": "ner", "extra_state_tokens": False,
        "hidden_width": 32, "maxout_pieces": 2, "use_upper": True, "nO": None, "tok2vec": _listener(ner_grad_factor),
    }  # fmt: skip
    nlp.add_pipe("ner", config={"model": ner_model})
    if textcat:
        textcat_model = {
            "@architectures": "spacy.TextCatReduce.v1", "exclusive_classes": True, "use_reduce_first": False,
            "use_reduce_last": False, "use_reduce_max": False, "use_reduce_mean": True, "nO": None, "tok2vec": _listener(l2_coef=0.01),
        }  # fmt: skip
        nlp.add_pipe("textcat", config={"model": textcat_model})
    return nlp


def _train(nlp, examples, epochs, batch_size=8):
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    for _ in range(epochs):
        for batch in minibatch(examples, batch_size):
            nlp.update(batch, sgd=optimizer, losses={})
    return optimizer


def test_ner_and_textcat_share_one_elmo_and_learn_their_own_mix(fixture_model, conll_dir):
    fix_random_seed(0)
    nlp = _shared_nlp(fixture_model)
    examples = _examples(nlp, conll_dir, 24)
    elmo = nlp.get_pipe("elmo")
    assert isinstance(elmo, spacy.ty.ListenedToComponent)
    assert elmo.listening_components == ["ner", "textcat"]
    cache = get_feature_cache(elmo.model)
    nlp.initialize(lambda: examples)
    before = {name: p.detach().clone() for name, p in get_bilm(elmo.model).named_parameters()}
    optimizer = nlp.create_optimizer()
    optimizer.learn_rate = 0.01
    for batch in minibatch(examples, 8):
        nlp.update(batch, sgd=optimizer)
    # One biLM run per batch for both listeners: each sentence computed once.
    n_sequences = len({tuple(eg.reference.text.split()) for eg in examples})
    assert cache.misses == len(examples) and cache.hits == len(examples) - n_sequences
    for batch in minibatch(examples, 8):
        nlp.update(batch, sgd=optimizer)
    assert cache.misses == len(examples), "epoch 2 reran the biLM"
    (ner_mix,) = find_mixes(nlp.get_pipe("ner").model)
    (textcat_mix,) = find_mixes(nlp.get_pipe("textcat").model)
    ner_weights, ner_gamma = learned_mix(ner_mix)
    textcat_weights, textcat_gamma = learned_mix(textcat_mix)
    assert not numpy.allclose(ner_weights, 1 / 3, atol=1e-4) and not numpy.allclose(textcat_weights, 1 / 3, atol=1e-4)
    assert not numpy.allclose(ner_weights, textcat_weights, atol=1e-4)
    assert ner_gamma != pytest.approx(textcat_gamma, abs=1e-5)
    # Frozen biLM: its weights did not change.
    for name, p in get_bilm(elmo.model).named_parameters():
        assert torch.equal(p.detach(), before[name]), name
    doc = nlp("Peter Blackburn met the European Commission in Brussels.")
    assert set(doc.cats) == {"PER", "NONE"}


def test_grad_factor_fine_tunes_the_bilm(fixture_model, conll_dir):
    fix_random_seed(0)
    nlp = _shared_nlp(fixture_model, ner_grad_factor=1.0)
    examples = _examples(nlp, conll_dir, 8)
    elmo = nlp.get_pipe("elmo")
    nlp.initialize(lambda: examples)
    bilm = get_bilm(elmo.model)
    before = {name: p.detach().clone() for name, p in bilm.named_parameters()}
    layers_before = nlp(examples[0].reference.text)._.elmo_layers
    optimizer, losses = nlp.create_optimizer(), {}
    # The parser's output layer starts at zero (no gradient on step 1), and spaCy applies a
    # component's gradients at its next finish_update: the biLM moves on step 3.
    for _ in range(3):
        nlp.update(examples, sgd=optimizer, losses=losses)
    assert losses["elmo"] > 0
    changed = [name for name, p in bilm.named_parameters() if not torch.equal(p.detach(), before[name])]
    assert "lstm.input_weights.0" in changed and "char_encoder.projection.weight" in changed
    # Predictions (fast path, feature cache) come from the updated weights: equal to the exact
    # path's output on them, as every dev evaluation of `spacy train` needs.
    doc = nlp(examples[0].reference.text)
    assert not numpy.allclose(doc._.elmo_layers, layers_before, atol=1e-3)
    (exact,), _ = elmo.model.begin_update([doc])
    numpy.testing.assert_allclose(doc._.elmo_layers, exact.layers, atol=1e-4)


@pytest.mark.parametrize("nested", [False, True])
def test_replace_listeners(fixture_model, conll_dir, tmp_path, nested):
    fix_random_seed(0)
    nlp = _shared_nlp(fixture_model, textcat=False)
    path = "model.tok2vec"
    if nested:  # the ElmoTok2Vec recipe: the listener sits at model.tok2vec.elmo
        nlp.remove_pipe("ner")
        tok2vec = {
            "@architectures": "spacy-elmo.ElmoTok2Vec.v1", "width": 32,
            "embed": {"@architectures": "spacy.MultiHashEmbed.v2", "width": 32, "attrs": ["NORM", "SHAPE"], "rows": [500, 50], "include_static_vectors": False},
            "elmo": _listener(layer_norm=True),
            "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 32, "depth": 1, "window_size": 1, "maxout_pieces": 2},
        }  # fmt: skip
        nlp.add_pipe(
            "ner",
            config={
                "model": {"@architectures": "spacy.TransitionBasedParser.v2", "state_type": "ner", "tok2vec": tok2vec}
            },
        )
        path = "model.tok2vec.elmo"
    examples = _examples(nlp, conll_dir, 16)
    _train(nlp, examples, epochs=1)
    text = "EU rejects German call to boycott British lamb ."
    expected_mix = learned_mix(find_mixes(nlp.get_pipe("ner").model)[0])
    doc = nlp(text)
    vectors = nlp.get_pipe("ner").model.get_ref("tok2vec").predict([doc])[0]
    nlp.replace_listeners("elmo", "ner", [path])
    assert nlp.get_pipe("elmo").listening_components == []
    assert learned_mix(find_mixes(nlp.get_pipe("ner").model)[0])[1] == expected_mix[1]
    nlp.remove_pipe("elmo")
    alone = nlp(text)
    assert [(e.text, e.label_) for e in alone.ents] == [(e.text, e.label_) for e in doc.ents]
    numpy.testing.assert_allclose(nlp.get_pipe("ner").model.get_ref("tok2vec").predict([alone])[0], vectors, atol=1e-5)
    assert "spacy-elmo.ElmoEmbed.v1" in nlp.config.to_str()
    nlp.to_disk(tmp_path / "replaced")
    loaded = spacy.load(tmp_path / "replaced")
    assert loaded.pipe_names == ["ner"]
    numpy.testing.assert_allclose(
        loaded.get_pipe("ner").model.get_ref("tok2vec").predict([loaded(text)])[0], vectors, atol=1e-5
    )


def test_textcat_config_trains_in_process(fixture_dir, conll_dir, tmp_path):
    from spacy.cli.train import train

    nlp = spacy.blank("en")
    for name, limit in (("train", 40), ("dev", 10)):
        docs = [eg.reference for eg in _examples(nlp, conll_dir, limit)]
        spacy.tokens.DocBin(docs=docs).to_disk(tmp_path / f"{name}.spacy")
    overrides = {
        "paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy"),
        "paths.elmo_options": str(fixture_dir / "options.json"), "paths.elmo_weights": str(fixture_dir / "lm_weights.hdf5"),
        "training.max_steps": 6, "training.eval_frequency": 3,
    }  # fmt: skip
    train(REPO / "project" / "configs" / "textcat_elmo.cfg", tmp_path / "out", overrides=overrides)
    trained = spacy.load(tmp_path / "out" / "model-last")
    assert trained.pipe_names == ["elmo", "textcat"]
    (mix,) = find_mixes(trained.get_pipe("textcat").model)
    assert numpy.abs(learned_mix(mix)[0] - 1 / 3).max() > 1e-5
    assert set(trained("Peter Blackburn spoke .").cats) == {"PER", "NONE"}
