"""Paragraphs to sentences of token strings, as the pipeline's tokenizer would see them."""

from contextlib import nullcontext
from itertools import islice
from typing import Callable, Iterable, Iterator, List, Optional

import spacy
from spacy.language import Language

Sentences = List[List[str]]
SentenceSplitter = Callable[[Iterable[str]], Iterator[Sentences]]
"""Maps paragraphs to, for each paragraph, its sentences as lists of token strings."""


@spacy.registry.misc("spacy-elmo.SpacySentences.v1")
def spacy_sentences(lang: str = "en", model: Optional[str] = None, batch_size: int = 256) -> SentenceSplitter:
    """Tokenize with spacy.blank(lang), or with the tokenizer of the pipeline ``model`` (a
    name or path: the one the elmo component will run in), and split sentences with the
    rule-based sentencizer. Whitespace tokens are dropped."""
    nlp = _tokenizer_pipeline(lang, model)

    # spaCy >= 3.8 frees the strings of each batch afterwards; the vocabulary would grow
    # with every new word of a long stream otherwise.
    memory_zone = getattr(nlp, "memory_zone", nullcontext)

    def split(paragraphs: Iterable[str]) -> Iterator[Sentences]:
        paragraphs = iter(paragraphs)
        while block := list(islice(paragraphs, batch_size)):
            with memory_zone():
                docs = [[[t.text for t in sent if not t.is_space] for sent in doc.sents] for doc in nlp.pipe(block)]
            for sentences in docs:
                yield [s for s in sentences if s]

    return split


@spacy.registry.misc("spacy-elmo.WhitespaceSentences.v1")
def whitespace_sentences() -> SentenceSplitter:
    """For pre-tokenised text: each line is one sentence, tokens split on whitespace."""

    def split(paragraphs: Iterable[str]) -> Iterator[Sentences]:
        for text in paragraphs:
            tokens = text.split()
            yield [tokens] if tokens else []

    return split


def _tokenizer_pipeline(lang: str, model: Optional[str]) -> Language:
    if model is None:
        nlp = spacy.blank(lang)
    else:
        nlp = spacy.load(model)
        for name in list(nlp.component_names):
            nlp.remove_pipe(name)
    nlp.add_pipe("sentencizer")
    return nlp
