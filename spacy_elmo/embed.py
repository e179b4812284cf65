"""Bulk ELMo features in the HDF5 layout of `allennlp elmo`.

The output holds one float32 dataset per sentence, named by its index ("0", "1", ...):
(n_layers, n_tokens, dim) for ``all``; (n_tokens, dim) for ``top`` (the last layer),
``average`` (the mean of the layers) and ``mix`` (gamma * sum_j w_j * layer_j, the weights
used as given, like the elmo component's layer_weights). A (1,) variable-length string
dataset "sentence_to_index" holds the JSON object {sentence text: "index"} (a repeated
sentence maps to its last index), unless ``forget_sentences``.

Input is streamed: sentences are read a chunk at a time and run in batches of at most
``max_batch_tokens`` padded tokens, so memory holds one chunk's words, one batch's vectors
and the sentence_to_index map (the input's text), whatever the input's size.
"""

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import h5py
import numpy
import torch
from tqdm import tqdm

from .atomic import atomic_write
from .layers.sequences import batch_by_tokens
from .model import BiLM, FastBiLM
from .pretrain.sentences import spacy_sentences

OUTPUTS = ("all", "top", "average", "mix")
SENTENCE_TO_INDEX = "sentence_to_index"


class EmbedError(ValueError):
    """Input that cannot be embedded (an empty line, a line that is not UTF-8, no DocBin)."""


class Sentence(NamedTuple):
    """text: the key in sentence_to_index. tokens: one output row each. spaces: which tokens
    are whitespace (spaCy's is_space): zero rows the biLM never reads, as in doc._.elmo_layers."""

    text: str
    tokens: List[str]
    spaces: Optional[List[bool]] = None

    @property
    def words(self) -> List[str]:
        """The tokens the biLM reads."""
        if self.spaces is None:
            return self.tokens
        return [token for token, space in zip(self.tokens, self.spaces) if not space]


def read_lines(stream: IO[bytes], name: str) -> Iterator[Tuple[int, str]]:
    """(line number from 1, text without the line break) of each line of a UTF-8 stream."""
    for number, raw in enumerate(stream, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise EmbedError(
                f"{name} line {number} is not UTF-8 (byte {raw[err.start]:#04x} at column {err.start + 1}). "
                "Convert the input to UTF-8, e.g. iconv -f latin1 -t utf-8 INPUT > INPUT.utf8."
            ) from None
        if number == 1:
            text = text.removeprefix("\ufeff")
        yield number, text.rstrip("\r\n")


def line_sentences(lines: Iterable[Tuple[int, str]], name: str) -> Iterator[Sentence]:
    """One sentence per line, tokens split on whitespace (allennlp elmo's input). An empty
    line is an error, as it is there."""
    for number, text in lines:
        sentence = text.strip()
        if not sentence:
            raise EmbedError(
                f"{name} line {number} is empty: each line must hold one sentence, tokens separated by spaces "
                "(allennlp elmo refuses empty lines too). Remove empty lines, or pass --tokenize for raw text."
            )
        yield Sentence(sentence, sentence.split())


def text_sentences(lines: Iterable[Tuple[int, str]], lang: str = "en", batch_size: int = 256) -> Iterator[Sentence]:
    """Raw text: each line tokenized by spacy.blank(lang) and split by the sentencizer, as
    pretraining reads text (whitespace tokens dropped; blank lines hold no sentence). A
    sentence's key is its tokens joined by single spaces."""
    split = spacy_sentences(lang=lang, batch_size=batch_size)
    for sentences in split(text for _, text in lines):
        for words in sentences:
            yield Sentence(" ".join(words), words)


def docbin_sentences(path: Path, lang: str = "en") -> Iterator[Sentence]:
    """The sentences of each Doc of a DocBin (.spacy) where it has sentence boundaries, else
    the whole Doc; every token is a row (whitespace tokens zero). Empty Docs are skipped."""
    import spacy
    from spacy.tokens import DocBin

    try:
        docs = DocBin().from_disk(path)
    except Exception as err:  # srsly/msgpack/zlib raise many kinds
        raise EmbedError(
            f"{path} is not a spaCy DocBin ({type(err).__name__}: {err}); write one with DocBin.to_disk."
        ) from None
    for doc in docs.get_docs(spacy.blank(lang).vocab):
        spans = doc.sents if doc.has_annotation("SENT_START") else [doc[:]]
        for span in spans:
            if len(span):
                yield Sentence(span.text, [t.text for t in span], [t.is_space for t in span])


def layer_features(
    fast_bilm: FastBiLM, sentences: Iterable[Sequence[str]], *, max_batch_tokens: int = 4096, chunk_tokens: int = 0
) -> Iterator[Tuple[int, numpy.ndarray]]:
    """(index, (n_layers, len(words), dim) float32 array) of each tokenised sentence, each
    its own biLM sequence in <S> .. </S>, in the order computed. Sentences are read about
    ``chunk_tokens`` words at a time (default 8 x max_batch_tokens) and each chunk runs in
    batches of at most ``max_batch_tokens`` padded tokens, longest first, as the elmo
    component batches. Sort by index for input order."""
    if max_batch_tokens < 1:
        raise ValueError(f"max_batch_tokens must be at least 1, got {max_batch_tokens}.")
    chunk_tokens = chunk_tokens or 8 * max_batch_tokens
    config = fast_bilm.config
    iterator = enumerate(sentences)
    while True:
        chunk: List[Tuple[int, Sequence[str]]] = []
        n_words = 0
        for index, words in iterator:
            if len(words) == 0:
                yield index, numpy.zeros((config.n_output_layers, 0, config.output_dim), dtype="float32")
                continue
            chunk.append((index, words))
            n_words += len(words)
            if n_words >= chunk_tokens:
                break
        if not chunk:
            return
        for batch in batch_by_tokens([len(words) for _, words in chunk], max_batch_tokens):
            layers = fast_bilm.forward_tokens([chunk[k][1] for k in batch]).layers.float().cpu().numpy()
            for b, k in enumerate(batch):
                index, words = chunk[k]
                yield index, numpy.ascontiguousarray(layers[:, b, : len(words)])


def check_mix(weights: Optional[Sequence[float]], n_layers: int) -> None:
    """A --mix must give one weight per biLM layer."""
    if weights is not None and len(weights) != n_layers:
        example = ",".join([f"{1 / n_layers:.3g}"] * n_layers)
        raise ValueError(
            f"--mix has {len(weights)} weight(s) but the biLM has {n_layers} layers (char CNN + {n_layers - 1} LSTM "
            f"layers); give one per layer, e.g. --mix {example}."
        )


def select_output(
    layers: numpy.ndarray, output: str, weights: Optional[Sequence[float]] = None, gamma: float = 1.0
) -> numpy.ndarray:
    """The array written for one sentence's (n_layers, n_tokens, dim) layers."""
    if output == "all":
        return layers
    if output == "top":
        return layers[-1]
    if output == "average":
        return layers.mean(axis=0)
    if output == "mix":
        check_mix(weights, layers.shape[0])
        mix = numpy.asarray(weights, dtype="float32")
        return (numpy.float32(gamma) * numpy.tensordot(mix, layers, axes=(0, 0))).astype("float32")
    raise ValueError(f"Unknown output {output!r}; choose one of {', '.join(OUTPUTS)}.")


@dataclass
class EmbedSummary:
    n_sentences: int
    n_tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        return self.n_tokens / self.seconds if self.seconds > 0 else 0.0


def embed(
    sentences: Iterable[Sentence],
    bilm: BiLM,
    output_path: Union[str, Path],
    *,
    output: str = "all",
    mix: Optional[Sequence[float]] = None,
    gamma: float = 1.0,
    device: Union[str, torch.device] = "cpu",
    max_batch_tokens: int = 4096,
    forget_sentences: bool = False,
    progress: bool = True,
) -> EmbedSummary:
    """Write the ELMo features of ``sentences`` to ``output_path`` (HDF5, allennlp elmo's
    layout; see the module docstring). The file is written next to ``output_path`` and
    renamed at the end: after an error nothing is left at ``output_path``."""
    if output not in OUTPUTS:
        raise ValueError(f"Unknown output {output!r}; choose one of {', '.join(OUTPUTS)}.")
    if (output == "mix") != (mix is not None):
        raise ValueError("Give mix weights exactly when output is 'mix'.")
    check_mix(mix, bilm.config.n_output_layers)
    fast = FastBiLM(bilm.to(device).eval())
    summary = EmbedSummary(0, 0, 0.0)

    def write(tmp: str) -> None:
        start = time.perf_counter()
        pending: Dict[int, Sentence] = {}
        sentence_to_index: Dict[str, int] = {}

        def words() -> Iterator[List[str]]:
            for index, sentence in enumerate(sentences):
                pending[index] = sentence
                yield sentence.words

        with (
            h5py.File(tmp, "w") as f,
            tqdm(unit=" sentences", file=sys.stderr, disable=not progress, dynamic_ncols=True) as bar,
        ):
            for index, layers in layer_features(fast, words(), max_batch_tokens=max_batch_tokens):
                sentence = pending.pop(index)
                if sentence.spaces is not None and any(sentence.spaces):
                    rows = numpy.zeros((layers.shape[0], len(sentence.tokens), layers.shape[2]), dtype="float32")
                    rows[:, [i for i, space in enumerate(sentence.spaces) if not space]] = layers
                    layers = rows
                f.create_dataset(str(index), data=select_output(layers, output, mix, gamma), dtype="float32")
                if not forget_sentences and index > sentence_to_index.get(sentence.text, -1):
                    sentence_to_index[sentence.text] = index  # a repeated sentence: its last index
                summary.n_sentences += 1
                summary.n_tokens += len(sentence.tokens)
                bar.update(1)
                if summary.n_sentences % 64 == 1:
                    bar.set_postfix_str(
                        f"{summary.n_tokens / max(time.perf_counter() - start, 1e-9):,.0f} tokens/s", refresh=False
                    )
            if not forget_sentences:
                in_order = sorted(sentence_to_index.items(), key=lambda item: item[1])
                text = json.dumps({sentence: str(index) for sentence, index in in_order})
                f.create_dataset(SENTENCE_TO_INDEX, data=[text], dtype=h5py.string_dtype())
        summary.seconds = time.perf_counter() - start

    atomic_write(Path(output_path), write)
    return summary
