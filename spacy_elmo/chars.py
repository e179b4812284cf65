"""ELMo's character ids: tokens to integer arrays, and the special symbols.

Each token becomes ``max_chars`` ids: beginning-of-word, the token's UTF-8 bytes (truncated
to ``max_chars - 2`` bytes), end-of-word, then padding. Every id is shifted by +1 so that 0
means "no token" (a padded position in a batch). The sentence boundaries ``<S>`` and ``</S>``
use the reserved byte values 256 and 257, so a literal token "<S>" in the text is ordinary
characters and never a boundary.
"""

from typing import Dict, List, Sequence

import numpy

BEGIN_OF_SENTENCE_BYTE = 256
END_OF_SENTENCE_BYTE = 257
BEGIN_OF_WORD = 258
END_OF_WORD = 259
PADDING = 260
MAX_CHARACTERS_PER_TOKEN = 50


class CharacterIds:
    """Turn token strings into ELMo character id arrays, caching each distinct string."""

    def __init__(self, max_chars: int = MAX_CHARACTERS_PER_TOKEN, cache_size: int = 100_000):
        if max_chars < 3:
            raise ValueError(f"max_characters_per_token must be at least 3 (begin, one byte, end); got {max_chars}.")
        self.max_chars = max_chars
        self.cache_size = cache_size
        self._cache: Dict[str, numpy.ndarray] = {}
        self.bos = self._symbol(BEGIN_OF_SENTENCE_BYTE)
        self.eos = self._symbol(END_OF_SENTENCE_BYTE)

    def _symbol(self, byte: int) -> numpy.ndarray:
        ids = numpy.full(self.max_chars, PADDING, dtype=numpy.int64)
        ids[0], ids[1], ids[2] = BEGIN_OF_WORD, byte, END_OF_WORD
        return ids + 1

    def token(self, text: str) -> numpy.ndarray:
        """The (max_chars,) id array of one token (shared: do not modify it)."""
        ids = self._cache.get(text)
        if ids is None:
            raw = text.encode("utf-8", "ignore")[: self.max_chars - 2]  # as bilm-tf: a lone surrogate dropped
            ids = numpy.full(self.max_chars, PADDING + 1, dtype=numpy.int64)
            ids[0] = BEGIN_OF_WORD + 1
            ids[1 : len(raw) + 1] = numpy.frombuffer(raw, dtype=numpy.uint8).astype(numpy.int64) + 1
            ids[len(raw) + 1] = END_OF_WORD + 1
            if len(self._cache) >= self.cache_size:
                self._cache.clear()
            self._cache[text] = ids
        return ids

    def sentence(self, tokens: Sequence[str]) -> numpy.ndarray:
        """A (len(tokens), max_chars) array for one token sequence (no <S>/</S>)."""
        if not tokens:
            return numpy.zeros((0, self.max_chars), dtype=numpy.int64)
        return numpy.stack([self.token(t) for t in tokens])

    def vocabulary(self, words: Sequence[str]) -> numpy.ndarray:
        """A (len(words), max_chars) array for the entries of a bilm-tf vocabulary file, where
        "<S>" and "</S>" stand for the sentence boundary symbols (unlike in running text)."""
        special = {"<S>": self.bos, "</S>": self.eos}
        if not words:
            return numpy.zeros((0, self.max_chars), dtype=numpy.int64)
        return numpy.stack([special[w] if w in special else self.token(w) for w in words])

    def batch(self, sentences: Sequence[Sequence[str]]) -> numpy.ndarray:
        """A (batch, longest, max_chars) array, padded with 0 (no <S>/</S>)."""
        for i, sent in enumerate(sentences):
            if isinstance(sent, str):
                raise TypeError(f"Sentence {i} is a string; expected a sequence of token strings, e.g. text.split().")
        longest = max((len(s) for s in sentences), default=0)
        out = numpy.zeros((len(sentences), longest, self.max_chars), dtype=numpy.int64)
        for i, sent in enumerate(sentences):
            if sent:
                out[i, : len(sent)] = self.sentence(sent)
        return out


def batch_to_ids(sentences: Sequence[Sequence[str]], max_chars: int = MAX_CHARACTERS_PER_TOKEN) -> numpy.ndarray:
    """Convenience: char ids for a batch of tokenised sentences."""
    return CharacterIds(max_chars).batch(sentences)


__all__: List[str] = ["CharacterIds", "batch_to_ids"]
