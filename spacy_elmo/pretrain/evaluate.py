"""Perplexity of the forward and backward LMs on held-out text, with the full softmax."""

import math
from dataclasses import asdict, dataclass
from itertools import islice
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import torch

from ..chars import CharacterIds
from .batches import make_batch, sentence_windows
from .corpus import CorpusError, TextLines
from .distributed import Processes
from .language_model import BiLanguageModel
from .sentences import SentenceSplitter
from .vocab import Vocabulary


@dataclass
class Perplexity:
    """exp of the mean NLL per predicted token (each word, and </S> or <S>); mean averages
    the two directions' NLL, as bilm-tf reports it."""

    forward: float
    backward: float
    mean: float
    n_tokens: int

    @classmethod
    def from_sums(cls, nll: torch.Tensor, n_tokens: int, source: str = "the evaluation text") -> "Perplexity":
        if n_tokens == 0:
            raise CorpusError(f"No tokens to evaluate: {source} yielded no sentences.")
        forward, backward = (float(x) / n_tokens for x in nll)
        return cls(_exp(forward), _exp(backward), _exp((forward + backward) / 2), n_tokens)

    def to_dict(self) -> Dict[str, float]:
        return asdict(self)


def _exp(x: float) -> float:
    return math.exp(x) if x < 700 else float("inf")


def text_sentences(
    lines: TextLines, splitter: SentenceSplitter, *, shard: int = 0, n_shards: int = 1, chunk: int = 256
) -> Iterator[List[str]]:
    """The sentences of the lines ``i`` with ``i % n_shards == shard``, tokenized in chunks."""
    texts = (text for i, (_, text) in enumerate(lines) if i % n_shards == shard)
    while True:
        block = list(islice(texts, chunk))
        if not block:
            return
        for sentences in splitter(block):
            yield from sentences


@torch.no_grad()
def perplexity(
    lm: BiLanguageModel,
    sentences: Iterable[List[str]],
    vocab: Vocabulary,
    *,
    batch_size: int = 64,
    max_sentences: int = 0,
    processes: Optional[Processes] = None,
    source: str = "the evaluation text",
) -> Perplexity:
    """Score each sentence on its own (zero initial state, <S> .. </S>), in eval mode."""
    nll, n_tokens = nll_sums(lm, islice(sentences, max_sentences or None), vocab, batch_size=batch_size)
    if processes is not None and processes.distributed:
        totals = processes.sum(torch.cat([nll.double(), torch.tensor([float(n_tokens)], dtype=torch.float64)]))
        nll, n_tokens = totals[:2], int(totals[2])
    return Perplexity.from_sums(nll, n_tokens, source)


def nll_sums(
    lm: BiLanguageModel, sentences: Iterable[List[str]], vocab: Vocabulary, *, batch_size: int
) -> Tuple[torch.Tensor, int]:
    chars = CharacterIds(lm.bilm.config.max_characters_per_token)
    was_training = lm.training
    lm.eval()
    total = torch.zeros(2, dtype=torch.float64)
    n_tokens = 0
    try:
        iterator = iter(sentences)
        while True:
            block = list(islice(iterator, batch_size))
            if not block:
                break
            windows = [next(sentence_windows(s, len(s) + 1)) for s in block]
            batch = make_batch(windows, vocab, chars)
            sums, _ = lm(batch)
            total += sums.double().cpu()
            n_tokens += batch.n_targets
    finally:
        lm.train(was_training)
    return total, n_tokens
