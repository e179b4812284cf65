"""Which tokens of a Doc go through the biLM together, and the biLM's output per Doc.

A Doc with sentence boundaries gives one biLM sequence per sentence (ELMo was trained on
sentences wrapped in <S> </S>); a Doc without them is one sequence. Either is cut into
windows of at most ``max_length`` tokens, so that memory stays bounded on any Doc length.
Whitespace tokens are left out of the sequences: ELMo never saw them, and their vectors
are zero.

spacy-transformers has span getters for sentences and strided windows, but not this
combination (sentences, cut when too long), and importing it loads HF transformers; the
splitting is short enough to own here.
"""

from typing import List, NamedTuple, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from thinc.types import Floats3d, Ints1d


class DocLayers(NamedTuple):
    """The biLM output for one Doc.

    layers: (n_layers + 1, len(doc), 2 x projection_dim), AllenNLP layout, zero rows for
        tokens the biLM skips (whitespace).
    segments: (len(doc),) index of each token's biLM sequence (sentence or window), -1
        where skipped; used to normalise layers per sentence.
    """

    layers: Floats3d
    segments: Ints1d


class BiLMSequence(NamedTuple):
    """One biLM input: the token strings and their positions in the Doc."""

    words: Tuple[str, ...]
    positions: numpy.ndarray


def sequence_ranges(doc: Doc, max_length: int) -> List[Tuple[int, int]]:
    """(start, end) token offsets of the biLM sequences of ``doc``, whitespace included."""
    if max_length < 1:
        raise ValueError(f"max_sequence_length must be at least 1, got {max_length}.")
    if len(doc) == 0:
        return []
    if doc.has_annotation("SENT_START"):
        spans = [(sent.start, sent.end) for sent in doc.sents]
    else:
        spans = [(0, len(doc))]
    return [(i, min(i + max_length, end)) for start, end in spans for i in range(start, end, max_length)]


def doc_sequences(doc: Doc, ranges: List[Tuple[int, int]]) -> List[BiLMSequence]:
    """The non-empty biLM sequences of ``doc`` for the given token ranges."""
    sequences = []
    for start, end in ranges:
        positions = [i for i in range(start, end) if not doc[i].is_space]
        if positions:
            sequences.append(
                BiLMSequence(tuple(doc[i].text for i in positions), numpy.asarray(positions, dtype="int64"))
            )
    return sequences


def segment_ids(doc: Doc, ranges: List[Tuple[int, int]]) -> numpy.ndarray:
    """Per token: the index of its biLM sequence, or -1 for tokens the biLM skips."""
    ids = numpy.full(len(doc), -1, dtype="int64")
    for number, sequence in enumerate(doc_sequences(doc, ranges)):
        ids[sequence.positions] = number
    return ids


def batch_by_tokens(lengths: Sequence[int], max_tokens: int) -> List[List[int]]:
    """Indices into ``lengths`` grouped longest first, so that each group's size x its longest
    length is at most ``max_tokens`` (a longer sequence runs alone). Sequences of equal length
    keep their order."""
    batches: List[List[int]] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True):
        if batches and (len(batches[-1]) + 1) * lengths[batches[-1][0]] <= max_tokens:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def stale_vectors_error(doc: Doc, n_rows: int, attr: str) -> ValueError:
    """The error for ELMo vectors of a Doc whose tokens changed after the elmo component ran."""
    return ValueError(
        f"doc._.{attr} holds {n_rows} token(s) but the Doc now has {len(doc)}: it was retokenized after the "
        "'elmo' component ran (e.g. by merge_entities). Put retokenizing components before 'elmo' in the "
        "pipeline, or run 'elmo' again on the retokenized Doc."
    )
