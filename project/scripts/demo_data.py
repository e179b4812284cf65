"""Data for the demo: slices of the real corpora where DATA_DIR has them, else a synthetic
sample that this script writes itself (so the demo runs anywhere).

Writes OUT_DIR/lm.train.txt, OUT_DIR/lm.dev.txt (raw text, one paragraph per line) and
OUT_DIR/ner.train.spacy, OUT_DIR/ner.dev.spacy (DocBins with entities), and prints which
source it used.
"""
import gzip
import itertools
import random
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

import spacy
import typer
from spacy.tokens import Doc, DocBin

sys.path.insert(0, str(Path(__file__).parent))
from convert_conll import read_conll2003  # noqa: E402

Sentence = Tuple[List[str], List[str]]  # words, IOB2 tags

PEOPLE = ["Anna Berg", "Tom Okafor", "Li Wei", "Maria Silva", "John Smith", "Ravi Patel", "Ines Duarte", "Omar Haddad"]
PLACES = ["Paris", "Lagos", "Osaka", "Lima", "Oslo", "Nairobi", "Texas", "Bavaria", "Quebec", "Kerala"]
ORGS = ["Acme Corp", "the United Nations", "Reuters", "Nordic Bank", "the World Bank", "Globex", "Unilever"]
TEMPLATES = [
    "{PER} flew to {LOC} on Monday .",
    "{ORG} said profits in {LOC} rose sharply .",
    "{PER} , a spokesman for {ORG} , declined to comment .",
    "Shares of {ORG} fell after {PER} resigned .",
    "The talks in {LOC} ended without a deal , {PER} said .",
    "{PER} will visit {LOC} and {LOC} next week .",
    "Analysts at {ORG} expect growth in {LOC} to slow .",
    "Officials in {LOC} met {PER} to discuss the plan .",
]


def synthetic_sentences(n: int, seed: int) -> Iterator[Sentence]:
    rng = random.Random(seed)
    fillers = {"PER": PEOPLE, "LOC": PLACES, "ORG": ORGS}
    for _ in range(n):
        words: List[str] = []
        tags: List[str] = []
        for piece in rng.choice(TEMPLATES).split():
            if piece.startswith("{"):
                label = piece[1:-1]
                name = rng.choice(fillers[label]).split()
                words.extend(name)
                tags.extend([f"B-{label}"] + [f"I-{label}"] * (len(name) - 1))
            else:
                words.append(piece)
                tags.append("O")
        yield words, tags


def to_docbin(sentences: Iterator[Sentence]) -> DocBin:
    vocab = spacy.blank("en").vocab
    docbin = DocBin()
    for words, tags in sentences:
        docbin.add(Doc(vocab, words=words, ents=tags))
    return docbin


def _lines(path: Path, n: int) -> List[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.strip() for line in itertools.islice(f, n) if line.strip()]


def main(
    data_dir: Path = typer.Argument(..., help="The shared data folder (may be absent)."),
    out_dir: Path = typer.Argument(...),
    lm_lines: int = typer.Option(4000, help="Raw-text lines for pretraining."),
    ner_sentences: int = typer.Option(1500, help="NER training sentences."),
    seed: int = 0,
) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    news, conll = data_dir / "lm" / "news.train.txt.gz", data_dir / "ner" / "conll2003"
    if news.exists() and (conll / "eng.train").exists():
        source = f"real data from {data_dir} (news.train / news.valid, CoNLL-2003 eng.train / eng.testa)"
        train_text = _lines(news, lm_lines)
        dev_text = _lines(data_dir / "lm" / "news.valid.txt.gz", 300)
        ner_train = read_conll2003(conll / "eng.train", ner_sentences)
        ner_dev = read_conll2003(conll / "eng.testa", 500)
    else:
        source = f"a synthetic sample ({data_dir} has no news.train / CoNLL-2003)"
        train_text = [" ".join(w) for w, _ in synthetic_sentences(lm_lines, seed)]
        dev_text = [" ".join(w) for w, _ in synthetic_sentences(300, seed + 1)]
        ner_train = synthetic_sentences(ner_sentences, seed + 2)
        ner_dev = synthetic_sentences(300, seed + 3)
    (out_dir / "lm.train.txt").write_text("\n".join(train_text) + "\n", encoding="utf-8")
    (out_dir / "lm.dev.txt").write_text("\n".join(dev_text) + "\n", encoding="utf-8")
    to_docbin(ner_train).to_disk(out_dir / "ner.train.spacy")
    to_docbin(ner_dev).to_disk(out_dir / "ner.dev.spacy")
    typer.echo(f"demo data: {source} -> {out_dir}")


if __name__ == "__main__":
    typer.run(main)
