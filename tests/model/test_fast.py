"""The inference fast path (FastBiLM) equals the exact path (BiLM.forward) within 1e-4 in fp32."""

import json

import pytest
import torch
from conftest import SHARED_DATA

from spacy_elmo.chars import CharacterIds
from spacy_elmo.formats.allennlp import load_bilm
from spacy_elmo.model import BiLM, preset
from spacy_elmo.model.fast import _PADDING_CHAR, FastBiLM, _best_split, pool_by_length, pool_characters

FIXTURES = SHARED_DATA / "elmo_fixtures"
FIXTURE_MODELS = {
    "allennlp": ("allennlp/options.json", "allennlp/lm_weights.hdf5", "allennlp/sentences.json"),
    "bilm-tf": (
        "bilm-tf/model/options.json",
        "bilm-tf/model/lm_weights.hdf5",
        "bilm-tf/model/lm_embeddings_sentences.json",
    ),
}
TOLERANCE = 1e-4
# Short sentences with the awkward cases: an empty row, one token, a token longer than the 50
# character slots (no slot trimming possible), repeated tokens, multi-byte characters.
SENTENCES = [
    ["The", "cat", "sat", "on", "the", "mat", "."],
    [],
    ["x" * 60, "and", "the", "cat"],
    ["Straße", "日本語", "😀👍🏽", "naïve", "e\u0301", "<S>"],
    ["."],
]


def _ids(sentences):
    return torch.from_numpy(CharacterIds().batch(sentences))


def _assert_same(exact, fast):
    assert fast.layers.shape == exact.layers.shape
    assert torch.equal(fast.mask, exact.mask)
    assert (fast.layers - exact.layers).abs().max().item() <= TOLERANCE
    assert (fast.state.hidden - exact.state.hidden).abs().max().item() <= TOLERANCE
    assert (fast.state.cell - exact.state.cell).abs().max().item() <= TOLERANCE


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(0)
    return BiLM(preset("small")).eval()


@pytest.mark.skipif(not FIXTURES.exists(), reason="../shared/data/elmo_fixtures is absent")
@pytest.mark.parametrize("case", sorted(FIXTURE_MODELS))
def test_fast_path_equals_exact_path_on_fixture_with_chained_state(case):
    options, weights, sentence_file = FIXTURE_MODELS[case]
    model = load_bilm(FIXTURES / options, FIXTURES / weights).eval()
    fast = FastBiLM(model)
    batches = json.loads((FIXTURES / sentence_file).read_text())
    exact_state = fast_state = None
    with torch.no_grad():
        for i in range(3):
            ids = _ids([batches[k][i].split() for k in range(len(batches))])
            exact, got = model(ids, exact_state), fast(ids, fast_state)
            _assert_same(exact, got)
            exact_state, fast_state = exact.state, got.state


def test_fast_path_equals_exact_path_on_small_size_random_weights(small):
    fast = FastBiLM(small)
    ids = _ids(SENTENCES)
    with torch.no_grad():
        exact = small(ids)
        _assert_same(exact, fast(ids))
        # Again from the token-vector cache, and with a state carried over.
        assert len(fast.cache) > 0
        _assert_same(exact, fast(ids))
        _assert_same(small(ids, exact.state), fast(ids, exact.state))
    assert fast.forward_tokens(SENTENCES).layers.shape == exact.layers.shape


@pytest.mark.parametrize("chunk_rows", [1, 7])
def test_input_gate_chunks_and_unkept_scratch_give_the_same_outputs(small, chunk_rows):
    """Many chunks of input gates (one step each, or a few), and scratch tensors too large to
    keep (fresh ones each step), on a batch with repeated tokens and a carried state."""
    fast = FastBiLM(small, chunk_rows=chunk_rows)
    fast._workspace.max_bytes = 0
    ids = _ids(SENTENCES)
    with torch.no_grad():
        exact = small(ids)
        _assert_same(exact, fast(ids))
        _assert_same(small(ids, exact.state), fast(ids, exact.state))


def test_empty_batches_keep_their_shapes(small):
    with torch.no_grad():
        for ids in (torch.zeros(0, 4, 50, dtype=torch.long), torch.zeros(2, 0, 50, dtype=torch.long)):
            exact, fast = small(ids), FastBiLM(small)(ids)
            assert fast.layers.shape == exact.layers.shape and fast.mask.shape == exact.mask.shape
            assert fast.state.hidden.shape == exact.state.hidden.shape
            assert torch.allclose(fast.state.cell, exact.state.cell, atol=TOLERANCE)


def test_trimmed_single_matmul_char_cnn_equals_character_encoder(small):
    ids = _ids([["a", "bb", "the", "Wednesday", "1,234.5"]])[0]
    long_ids = _ids([["y" * 49, "z"]])[0]
    with torch.no_grad():
        for rows in (ids, long_ids):
            expected = small.char_encoder(rows)
            got = small.char_encoder.transform(pool_characters(small.char_encoder, rows))
            assert (got - expected).abs().max().item() <= 1e-5


def test_short_and_long_tokens_run_apart_with_the_same_vectors(small):
    words = ["a", "of", "the", "cat", "sat", "on", "mat", "to", "is", "I"] * 3 + ["internationalisation", "x" * 40]
    rows = _ids([words])[0]
    lengths = (rows != _PADDING_CHAR).sum(dim=1)
    split = _best_split(lengths)
    assert split is not None and (lengths <= split).sum() == 30  # the two long words run apart
    assert _best_split(lengths[:30]) is None  # similar lengths: one group
    with torch.no_grad():
        got = small.char_encoder.transform(pool_by_length(small.char_encoder, rows))
        assert (got - small.char_encoder(rows)).abs().max().item() <= 1e-5


def test_cache_is_bounded_and_dropped_when_char_weights_change():
    torch.manual_seed(3)
    model = BiLM(preset("tiny")).eval()
    fast = FastBiLM(model, cache_size=4)
    ids = _ids(SENTENCES)
    with torch.no_grad():
        fast(ids)
        assert len(fast.cache) == 4
        model.char_encoder.projection.weight.mul_(2.0)
        _assert_same(model(ids), fast(ids))


def test_lstm_weight_updates_are_seen():
    torch.manual_seed(4)
    model = BiLM(preset("tiny")).eval()
    fast = FastBiLM(model)
    ids = _ids(SENTENCES[:1])
    with torch.no_grad():
        fast(ids)
        model.lstm.hidden_weights[0].mul_(0.5)
        _assert_same(model(ids), fast(ids))


@pytest.mark.parametrize("chunk_rows", [1024, 7])
def test_bf16_matmuls_stay_close_to_fp32(small, chunk_rows):
    """Row counts that are no multiple of the bf16 padding (5 sentences, odd chunks)."""
    fast = FastBiLM(small, matmul_dtype=torch.bfloat16, chunk_rows=chunk_rows)
    ids = _ids(SENTENCES)
    with torch.no_grad():
        got, want = fast(ids), small(ids)
    error = (got.layers - want.layers).abs().max().item()
    assert 0 < error < 2e-2
    assert (got.state.hidden - want.state.hidden).abs().max().item() < 2e-2


def test_wrong_input_shape_names_the_fix(small):
    with pytest.raises(ValueError, match=r"got \(2, 50\).*CharacterIds"):
        FastBiLM(small)(torch.zeros(2, 50, dtype=torch.long))
