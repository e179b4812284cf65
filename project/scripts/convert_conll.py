"""Convert CoNLL-2003 (token POS chunk NER, IOB1 tags) or WNUT-17 (token<TAB>tag, IOB2) to a
spaCy DocBin.

    python project/scripts/convert_conll.py ../shared/data/ner/conll2003/eng.train corpus/train.spacy [--limit 100]
    python project/scripts/convert_conll.py ../shared/data/ner/wnut17/wnut17train.conll corpus/wnut17/train.spacy --format wnut17

One Doc per sentence: CoNLL-2003's -DOCSTART- lines are skipped; in WNUT-17 a blank line, or
one with neither token nor tag (the training file splits posts into sentences with them), ends
a sentence, as in the official split sizes (3,394 / 1,009 / 1,287).
"""

from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import typer
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab


def iob1_to_iob2(tags: List[str]) -> List[str]:
    """IOB1 (B- only between adjacent entities of one type) to IOB2 (B- starts every entity)."""
    converted = []
    for i, tag in enumerate(tags):
        if tag.startswith("I-"):
            previous = converted[i - 1] if i else "O"
            if previous == "O" or previous[2:] != tag[2:]:
                tag = "B-" + tag[2:]
        converted.append(tag)
    return converted


def read_conll2003_columns(path: Path, limit: Optional[int] = None) -> Iterator[List[List[str]]]:
    """The (token, POS, chunk, NER) rows of each sentence, at most ``limit`` sentences."""
    rows: List[List[str]] = []
    count = 0
    with Path(path).open(encoding="utf-8") as lines:
        for line in lines:
            fields = line.split()
            if fields and fields[0] != "-DOCSTART-":
                if len(fields) != 4:
                    raise ValueError(f"{path}: expected 4 columns (token POS chunk NER), got {line!r}.")
                rows.append(fields)
            elif rows:
                yield rows
                count += 1
                rows = []
                if limit is not None and count >= limit:
                    return
    if rows:
        yield rows


def read_conll2003(path: Path, limit: Optional[int] = None) -> Iterator[Tuple[List[str], List[str]]]:
    """(words, IOB2 tags) per sentence, at most ``limit`` sentences."""
    for rows in read_conll2003_columns(path, limit):
        yield [r[0] for r in rows], iob1_to_iob2([r[3] for r in rows])


def read_wnut17(path: Path, limit: Optional[int] = None) -> Iterator[Tuple[List[str], List[str]]]:
    """(words, IOB2 tags) per sentence, at most ``limit`` sentences."""
    words: List[str] = []
    tags: List[str] = []
    count = 0
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if line.strip():
                token, sep, tag = line.partition("\t")
                if not sep or not token or not (tag == "O" or tag[:2] in ("B-", "I-")):
                    raise ValueError(f"{path}:{number}: expected TOKEN<TAB>TAG (O, B-type or I-type), got {line!r}.")
                words.append(token)
                tags.append(tag)
            elif words:
                yield words, tags
                count += 1
                words, tags = [], []
                if limit is not None and count >= limit:
                    return
    if words:
        yield words, tags


READERS = {"conll2003": read_conll2003, "wnut17": read_wnut17}


def conll_to_docbin(path: Path, limit: Optional[int] = None, format: str = "conll2003") -> DocBin:
    vocab = Vocab()
    return DocBin(docs=(Doc(vocab, words=words, ents=tags) for words, tags in READERS[format](path, limit)))


def main(
    input_path: Path = typer.Argument(..., exists=True, dir_okay=False, help="CoNLL-2003 file, e.g. eng.train"),
    output_path: Path = typer.Argument(..., help="DocBin to write (.spacy)"),
    limit: Optional[int] = typer.Option(None, help="Keep only the first N sentences."),
    format: str = typer.Option("conll2003", help=f"The input's format: {', '.join(READERS)}."),
) -> None:
    if format not in READERS:
        raise typer.BadParameter(f"{format!r} is not one of {', '.join(READERS)}.", param_hint="--format")
    docbin = conll_to_docbin(input_path, limit, format)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(output_path)
    typer.echo(f"{len(docbin)} sentences -> {output_path}")


if __name__ == "__main__":
    typer.run(main)
