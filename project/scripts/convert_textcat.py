"""Convert SST (PTB trees) and TREC ("LABEL text") into spaCy DocBins for textcat.

python project/scripts/convert_textcat.py sst5 DATA_DIR/textcat/sst/trees/train.txt OUT.spacy
python project/scripts/convert_textcat.py sst2 DATA_DIR/textcat/sst/trees/train.txt OUT.spacy
python project/scripts/convert_textcat.py trec DATA_DIR/textcat/trec/TREC.train.all OUT.spacy [--limit N]
"""

import re
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import spacy
import typer
from spacy.tokens import Doc, DocBin

SST5_LABELS = ["very_negative", "negative", "neutral", "positive", "very_positive"]
SST2_LABELS = ["negative", "positive"]
TREC_LABELS = ["DESC", "ENTY", "ABBR", "HUM", "LOC", "NUM"]
_LEAF = re.compile(r"\(\d+ ([^()]+)\)")
_PTB_UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "``": '"', "''": '"'}


def read_sst(path: Path, binary: bool) -> Iterator[Tuple[List[str], str]]:
    """(tokens, label) per tree; the root's label is the SST-5 class. SST-2 drops neutral."""
    for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if not line.startswith("(") or not line[1].isdigit():
            raise ValueError(f"{path}:{line_number}: expected a PTB tree like '(3 (2 The) ...)', got {line[:40]!r}")
        root = int(line[1])
        words = [_PTB_UNESCAPE.get(w, w) for w in _LEAF.findall(line)]
        if binary:
            if root == 2:
                continue
            yield words, SST2_LABELS[int(root > 2)]
        else:
            yield words, SST5_LABELS[root]


def read_trec(path: Path) -> Iterator[Tuple[List[str], str]]:
    """(tokens, coarse label) per line of "LABEL text" (Latin-1, labels 0..5)."""
    for line_number, line in enumerate(path.read_text(encoding="latin-1").splitlines(), 1):
        if not line.strip():
            continue
        label, _, text = line.partition(" ")
        if not label.isdigit() or int(label) >= len(TREC_LABELS):
            raise ValueError(f"{path}:{line_number}: expected 'LABEL text' with LABEL in 0..5, got {line[:40]!r}")
        yield text.split(), TREC_LABELS[int(label)]


def to_docbin(examples: Iterator[Tuple[List[str], str]], labels: List[str], limit: Optional[int] = None) -> DocBin:
    vocab = spacy.blank("en").vocab
    docbin = DocBin(store_user_data=False)
    for i, (words, label) in enumerate(examples):
        if limit is not None and i >= limit:
            break
        doc = Doc(vocab, words=words)
        doc.cats = {name: float(name == label) for name in labels}
        docbin.add(doc)
    return docbin


def main(
    dataset: str = typer.Argument(..., help="sst5, sst2 or trec"),
    input_path: Path = typer.Argument(..., exists=True, dir_okay=False),
    output_path: Path = typer.Argument(...),
    limit: Optional[int] = typer.Option(None, help="Keep the first N examples."),
) -> None:
    readers = {
        "sst5": (lambda: read_sst(input_path, binary=False), SST5_LABELS),
        "sst2": (lambda: read_sst(input_path, binary=True), SST2_LABELS),
        "trec": (lambda: read_trec(input_path), TREC_LABELS),
    }
    if dataset not in readers:
        raise typer.BadParameter(f"unknown dataset {dataset!r}; choose one of {sorted(readers)}")
    read, labels = readers[dataset]
    docbin = to_docbin(read(), labels, limit)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(output_path)
    typer.echo(f"{len(docbin)} {dataset} docs -> {output_path}")


if __name__ == "__main__":
    typer.run(main)
