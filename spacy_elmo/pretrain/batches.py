"""Training batches for the two language models, read from a text stream.

Every batch row is its own stream of sentences: usable paragraph ``g`` of the endless stream
(the text repeated epoch after epoch) goes to row ``g % n_rows``. So the rows, and hence the
batches, are the same whatever the number of processes: rank ``k`` of ``W`` owns rows
``k*n_rows/W .. (k+1)*n_rows/W - 1`` and tokenizes only their lines.

Each sentence becomes ``<S> w_1 .. w_n </S>`` for the forward LM and ``</S> w_n .. w_1 <S>``
for the backward LM. A window holds ``unroll_steps`` inputs and their next tokens as targets.
Two modes:

- ``stream`` (bilm-tf): sentences follow each other in a row without padding, windows cut
  across sentence boundaries and the LSTM state is carried from one batch to the next
  (truncated back-propagation through time).
- ``sentences``: each row holds one sentence (a long one is cut into several windows),
  padded; the LSTM starts from zero state in every batch.
"""

from collections import deque
from typing import Any, Deque, Dict, Iterator, List, NamedTuple, Optional, Tuple

import numpy
import torch

from ..chars import CharacterIds
from .corpus import CorpusError, TextLines
from .sentences import SentenceSplitter
from .vocab import BOS, EOS, Vocabulary

MODES = ("stream", "sentences")


class LMBatch(NamedTuple):
    """token_chars: (n_unique + 1, max_chars) character ids, row 0 padding.
    token_index: (2, rows, steps) row of token_chars for each input, [forward, backward].
    targets: (2, rows, steps) vocabulary ids of the next token. mask: (rows, steps) bool."""

    token_chars: torch.Tensor
    token_index: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor

    @property
    def n_targets(self) -> int:
        return int(self.mask.sum())


class RowStreams:
    """Sentences for a set of batch rows, read from ``lines`` in order, text repeating forever."""

    def __init__(self, lines: TextLines, splitter: SentenceSplitter, *, rows: range, n_rows: int):
        if not rows or rows.start < 0 or rows.stop > n_rows:
            raise ValueError(f"rows {rows} must be a non-empty part of range({n_rows}).")
        self.lines = lines
        self.splitter = splitter
        self.rows = rows
        self.n_rows = n_rows
        self.epoch = 0
        self.line = 0  # next line of the current epoch
        self.global_line = 0  # usable lines read across epochs: decides the row
        self.pending: Dict[int, Deque[List[str]]] = {r: deque() for r in rows}
        self._reader: Optional[Iterator[Tuple[int, str]]] = None

    def next_sentence(self, row: int) -> List[str]:
        while not self.pending[row]:
            self._fill(row)
        return self.pending[row].popleft()

    def _fill(self, row: int) -> None:
        """Read lines until ``row`` has one, and tokenize all local lines read."""
        texts: List[str] = []
        owners: List[int] = []
        chunk = max(64, 2 * len(self.rows))
        while row not in owners or len(texts) < chunk:
            item = self._next_line()
            if item is None:
                break
            owner, text = item
            if owner in self.pending:
                texts.append(text)
                owners.append(owner)
        for owner, sentences in zip(owners, self.splitter(texts)):
            self.pending[owner].extend(sentences)

    def _next_line(self) -> Optional[Tuple[int, str]]:
        """(row, text) of the next line, or None at the end of an epoch."""
        if self._reader is None:
            self._reader = self.lines.read(start=self.line)
        for index, text in self._reader:
            self.global_line += 1
            self.line = index + 1
            return (self.global_line - 1) % self.n_rows, text
        if self.line == 0:  # a whole epoch without one usable line
            detail = self.lines.describe_skipped() or "every line is blank"
            raise CorpusError(f"No usable text in {', '.join(map(str, self.lines.files))}: {detail}.")
        self.epoch += 1
        self.line = 0
        self._reader = None
        return None

    def state_dict(self) -> Dict[str, Any]:
        return {
            "epoch": self.epoch,
            "line": self.line,
            "global_line": self.global_line,
            "pending": {r: list(q) for r, q in self.pending.items()},
        }

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        if set(state["pending"]) != set(self.rows):
            raise ValueError(
                f"The checkpoint's data state is for rows {sorted(state['pending'])}, this process owns {list(self.rows)}: "
                "resume with the same batch size and number of processes."
            )
        self.epoch, self.line, self.global_line = state["epoch"], state["line"], state["global_line"]
        self.pending = {r: deque(q) for r, q in state["pending"].items()}
        self._reader = None


class WindowBatcher:
    """Windows of ``unroll_steps`` tokens per row, for both directions, as LMBatch tensors."""

    def __init__(
        self, streams: RowStreams, vocab: Vocabulary, chars: CharacterIds, *, unroll_steps: int, mode: str = "stream"
    ):
        if mode not in MODES:
            raise ValueError(f"data.mode must be one of {MODES}, got {mode!r}.")
        if unroll_steps < 1:
            raise ValueError(f"unroll_steps must be positive, got {unroll_steps}.")
        self.streams = streams
        self.vocab = vocab
        self.chars = chars
        self.unroll_steps = unroll_steps
        self.mode = mode
        # Per local row, the tokens still to be read: [forward queue, backward queue].
        self.queues: Dict[int, Tuple[List[str], List[str]]] = {r: ([], []) for r in streams.rows}

    @property
    def stateful(self) -> bool:
        return self.mode == "stream"

    def __iter__(self) -> Iterator[LMBatch]:
        while True:
            yield self.next_batch()

    def next_batch(self) -> LMBatch:
        windows = [self._window(row) for row in self.streams.rows]
        return make_batch(windows, self.vocab, self.chars)

    def _window(self, row: int) -> Tuple[List[str], List[str]]:
        forward, backward = self.queues[row]
        needed = self.unroll_steps + 1
        if self.mode == "stream":
            while len(forward) < needed:
                self._push(row, self.streams.next_sentence(row))
        elif not forward:  # sentences: the row's previous sentence is finished
            self._push(row, self.streams.next_sentence(row))
        windows = forward[:needed], backward[:needed]
        del forward[: self.unroll_steps], backward[: self.unroll_steps]
        if self.mode == "sentences" and len(forward) < 2:  # only its last target is left
            del forward[:], backward[:]
        return windows

    def _push(self, row: int, sentence: List[str]) -> None:
        forward, backward = self.queues[row]
        forward.extend([BOS, *sentence, EOS])
        backward.extend([EOS, *reversed(sentence), BOS])

    def state_dict(self) -> Dict[str, Any]:
        return {
            "streams": self.streams.state_dict(),
            "queues": {r: (list(f), list(b)) for r, (f, b) in self.queues.items()},
        }

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.streams.load_state_dict(state["streams"])
        self.queues = {r: (list(f), list(b)) for r, (f, b) in state["queues"].items()}


def sentence_windows(sentence: List[str], unroll_steps: int) -> Iterator[Tuple[List[str], List[str]]]:
    """A sentence's (forward, backward) windows of at most unroll_steps + 1 tokens each."""
    forward, backward = [BOS, *sentence, EOS], [EOS, *reversed(sentence), BOS]
    for start in range(0, len(forward) - 1, unroll_steps):
        yield forward[start : start + unroll_steps + 1], backward[start : start + unroll_steps + 1]


def make_batch(windows: List[Tuple[List[str], List[str]]], vocab: Vocabulary, chars: CharacterIds) -> LMBatch:
    """Tensors for rows of (forward, backward) token windows; each window's last token is
    only a target. Both windows of a row have the same length."""
    steps = max(len(f) for f, _ in windows) - 1
    rows = len(windows)
    index = numpy.zeros((2, rows, steps), dtype=numpy.int64)
    targets = numpy.zeros((2, rows, steps), dtype=numpy.int64)
    mask = numpy.zeros((rows, steps), dtype=bool)
    unique: Dict[str, int] = {}
    for r, pair in enumerate(windows):
        n = len(pair[0]) - 1
        mask[r, :n] = True
        for d, tokens in enumerate(pair):
            index[d, r, :n] = [unique.setdefault(t, len(unique) + 1) for t in tokens[:-1]]
            targets[d, r, :n] = [vocab.id(t) for t in tokens[1:]]
    token_chars = numpy.zeros((len(unique) + 1, chars.max_chars), dtype=numpy.int64)
    for token, i in unique.items():
        token_chars[i] = chars.bos if token == BOS else chars.eos if token == EOS else chars.token(token)
    return LMBatch(*(torch.from_numpy(a) for a in (token_chars, index, targets, mask)))
