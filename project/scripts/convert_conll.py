"""Convert CoNLL-2003 (token POS chunk NER, IOB1 tags) to a spaCy DocBin.

    python project/scripts/convert_conll.py ../shared/data/ner/conll2003/eng.train corpus/train.spacy [--limit 100]

One Doc per sentence; -DOCSTART- lines are skipped.
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


def conll_to_docbin(path: Path, limit: Optional[int] = None) -> DocBin:
    vocab = Vocab()
    return DocBin(docs=(Doc(vocab, words=words, ents=tags) for words, tags in read_conll2003(path, limit)))


def main(
    input_path: Path = typer.Argument(..., exists=True, dir_okay=False, help="CoNLL-2003 file, e.g. eng.train"),
    output_path: Path = typer.Argument(..., help="DocBin to write (.spacy)"),
    limit: Optional[int] = typer.Option(None, help="Keep only the first N sentences."),
) -> None:
    docbin = conll_to_docbin(input_path, limit)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(output_path)
    typer.echo(f"{len(docbin)} sentences -> {output_path}")


if __name__ == "__main__":
    typer.run(main)
