"""Behaviour of the biLM module: batch invariance, unusual tokens, states, dtype."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_elmo.chars import CharacterIds
from spacy_elmo.model import BiLM, BiLMConfig, ScalarMix, preset

CONFIG = BiLMConfig(
    char_embedding_dim=4,
    filters=[(1, 4), (2, 8), (3, 8)],
    n_highway=1,
    lstm_dim=24,
    projection_dim=8,
    use_skip_connections=True,
)
WORDS = [
    "the",
    "cat",
    "sat",
    ".",
    ",",
    " ",
    "\n",
    "<S>",
    "</S>",
    "x" * 60,
    "日本語",
    "😀👍🏽",
    "e\u0301",
    "Straße",
    "naïve",
]
sentences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(1)
    return BiLM(CONFIG).eval()


def _run(model, batch, state=None):
    with torch.no_grad():
        return model(torch.from_numpy(CharacterIds().batch(batch)), state)


@settings(max_examples=30, deadline=None)
@given(target=sentences, others=st.lists(sentences, max_size=5), position=st.integers(0, 5))
def test_sentence_alone_equals_sentence_in_padded_batch(model, target, others, position):
    position = min(position, len(others))
    batch = others[:position] + [target] + others[position:]
    alone = _run(model, [target]).layers[:, 0]
    together = _run(model, batch).layers[:, position, : len(target)]
    assert torch.allclose(alone, together, atol=1e-6, rtol=0)


def test_repeated_calls_are_identical_and_padding_is_zero(model):
    batch = [["a", "b", "c", "d"], ["e"]]
    first, second = _run(model, batch), _run(model, batch)
    assert torch.equal(first.layers, second.layers)
    assert first.mask.tolist() == [[True] * 4, [True, False, False, False]]
    assert (first.layers[:, 1, 1:] == 0).all()


@pytest.mark.parametrize("token", [" ", "x" * 200, "日本語", "👩‍👩‍👧", "e\u0301", "<S>", "</S>", ""])
def test_unusual_tokens_give_finite_vectors(model, token):
    out = _run(model, [["before", token, "after"]])
    assert out.layers.shape == (3, 1, 3, 16)
    assert torch.isfinite(out.layers).all()


def test_literal_boundary_token_differs_from_the_boundary(model):
    bos = model.char_encoder(model.boundary_char_ids[:1])
    literal = model.embed_tokens(torch.from_numpy(CharacterIds().batch([["<S>"]])))[0]
    assert not torch.allclose(bos, literal)


def test_empty_sentences_and_empty_batch(model):
    out = _run(model, [[], ["word"]])
    assert out.layers.shape == (3, 2, 1, 16)
    assert (out.layers[:, 0] == 0).all() and out.mask.tolist() == [[False], [True]]
    empty = _run(model, [])
    assert empty.layers.shape == (3, 0, 0, 16)


def test_chained_state_differs_from_stateless_and_is_per_row(model):
    batch = [["one", "two"], ["three"]]
    first = _run(model, batch)
    chained = _run(model, batch, first.state)
    stateless = _run(model, batch)
    assert not torch.allclose(chained.layers[1:], stateless.layers[1:])
    # Layer 0 is context-insensitive: state never reaches it.
    assert torch.equal(chained.layers[0], stateless.layers[0])
    # Row 1's state after its one token equals the state of running it alone.
    alone = _run(model, [["three"]])
    assert torch.allclose(first.state.hidden[:, :, 1], alone.state.hidden[:, :, 0], atol=1e-6)


def test_float32_and_shape_errors(model):
    out = _run(model, [["a"]])
    assert out.layers.dtype == torch.float32
    with pytest.raises(ValueError, match=r"shape \(batch, tokens, 50\), got \(1, 50\)"):
        model(torch.ones(1, 50, dtype=torch.long))


def test_scalar_mix_weights_gamma_and_per_sentence_layer_norm():
    layers = torch.randn(3, 2, 5, 4, generator=torch.Generator().manual_seed(0))
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    mix = ScalarMix(3, initial_weights=[0.0, 0.0, 0.0], gamma=2.0)
    # float32 rounding of softmax(0) = 1/3 and of the sum: absolute, not relative, tolerance
    assert torch.allclose(mix(layers, mask), 2.0 * layers.mean(dim=0), atol=1e-6, rtol=0)
    normed = ScalarMix(3, layer_norm=True)
    alone = normed(layers[:, 1:, :2], mask[1:, :2])
    together = normed(layers, mask)
    assert torch.allclose(alone[0], together[1, :2], atol=1e-5)
    real = normed._normalize(layers, mask)[:, 0]
    assert torch.allclose(real.mean(dim=(1, 2)), torch.zeros(3), atol=1e-5)
    with pytest.raises(ValueError, match="3 weights but got 2 layers"):
        mix(layers[:2], mask)


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"activation": "gelu"}, "activation must be 'relu' or 'tanh', got 'gelu'"),
        ({"filters": []}, "filters must list at least one"),
        ({"filters": [(0, 4)]}, r"filter widths and counts must be positive, got \[\(0, 4\)\]"),
        ({"filters": [(2, -1)]}, "filter widths and counts must be positive"),
        ({"filters": [(60, 4)]}, "a filter is wider than max_characters_per_token"),
        ({"lstm_dim": 0}, "lstm_dim must be positive, got 0"),
        ({"projection_dim": -2}, "projection_dim must be positive, got -2"),
        ({"n_layers": 0}, "n_layers must be positive, got 0"),
        ({"char_embedding_dim": 0}, "char_embedding_dim must be positive, got 0"),
        ({"n_highway": -1}, "n_highway must be >= 0, got -1"),
        ({"n_characters": 300}, "n_characters must be 261 or 262"),
        (
            {"max_characters_per_token": 0, "filters": [(1, 4)]},
            "max_characters_per_token must be at least 3 for begin, one byte and end, got 0",
        ),
    ],
)
def test_bad_config_values_are_named(changes, message):
    with pytest.raises(ValueError, match=f"^Invalid biLM configuration: .*{message}"):
        BiLMConfig(**changes)


def test_all_config_problems_are_reported_at_once():
    with pytest.raises(ValueError, match="activation must be .*; lstm_dim must be positive, got 0\\.$"):
        BiLMConfig(activation="x", lstm_dim=0)


def test_config_rejects_fewer_than_three_character_slots():
    with pytest.raises(ValueError, match="Invalid biLM configuration: .*max_characters_per_token"):
        BiLMConfig(max_characters_per_token=2, filters=[(1, 4)])


def test_unknown_preset_names_the_choices():
    with pytest.raises(
        ValueError, match=r"Unknown biLM preset 'huge'; choose one of \['medium', 'mid', 'original', 'small', 'tiny'\]"
    ):
        preset("huge")
    copy = preset("tiny")
    copy.filters.append((6, 8))
    assert preset("tiny").filters == [(1, 16), (2, 16), (3, 32), (4, 64), (5, 128)]  # a copy, not the preset itself
