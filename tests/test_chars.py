import numpy
import pytest

from spacy_elmo.chars import BEGIN_OF_WORD, END_OF_WORD, PADDING, CharacterIds


@pytest.fixture
def chars():
    return CharacterIds()


def test_token_layout(chars):
    ids = chars.token("ab")
    assert ids.shape == (50,)
    assert list(ids[:4]) == [BEGIN_OF_WORD + 1, ord("a") + 1, ord("b") + 1, END_OF_WORD + 1]
    assert (ids[4:] == PADDING + 1).all()


def test_literal_boundary_text_is_not_the_boundary_symbol(chars):
    literal = chars.token("<S>")
    assert not numpy.array_equal(literal, chars.bos)
    assert list(literal[1:4]) == [ord("<") + 1, ord("S") + 1, ord(">") + 1]
    assert chars.bos[1] == 256 + 1 and chars.eos[1] == 257 + 1


def test_long_tokens_are_truncated_by_bytes(chars):
    word = "x" * 100
    ids = chars.token(word)
    assert (ids[1:49] == ord("x") + 1).all() and ids[49] == END_OF_WORD + 1
    # A multi-byte character cut in the middle keeps its leading bytes only.
    emoji = "😀" * 13  # 52 bytes
    ids = chars.token(emoji)
    assert list(ids[1:49] - 1) == list(emoji.encode("utf-8")[:48])


@pytest.mark.parametrize("token", [" ", "\n", "日本語", "👩‍👩‍👧", "é", "Ω≈ç√"])
def test_unusual_tokens_are_utf8_bytes(chars, token):
    raw = token.encode("utf-8")
    ids = chars.token(token)
    assert list(ids[1 : len(raw) + 1] - 1) == list(raw)
    assert ids[len(raw) + 1] == END_OF_WORD + 1


def test_a_lone_surrogate_is_dropped_as_bilm_tf_does(chars):
    ids = chars.token("caf\udce9")
    assert list(ids[1:5] - 1) == list(b"caf") + [END_OF_WORD]


def test_batch_pads_with_zero_rows(chars):
    batch = chars.batch([["a", "b", "c"], ["d"], []])
    assert batch.shape == (3, 3, 50)
    assert (batch[1, 1:] == 0).all() and (batch[2] == 0).all()
    assert (batch[0] > 0).all()


def test_string_instead_of_tokens_is_rejected(chars):
    with pytest.raises(TypeError, match="sequence of token strings"):
        chars.batch(["a sentence as one string"])


def test_max_chars_too_small():
    with pytest.raises(ValueError, match="at least 3"):
        CharacterIds(max_chars=2)


def test_vocabulary_entries_use_boundary_symbols(chars):
    ids = chars.vocabulary(["<S>", "the", "</S>"])
    assert numpy.array_equal(ids[0], chars.bos) and numpy.array_equal(ids[2], chars.eos)
    assert numpy.array_equal(ids[1], chars.token("the"))
