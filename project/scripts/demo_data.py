"""Data for the demo: slices of the real corpora where DATA_DIR has them, else a synthetic
sample that this script writes itself (so the demo runs anywhere).

Writes OUT_DIR/lm.train.txt, OUT_DIR/lm.dev.txt (raw text, one paragraph per line),
OUT_DIR/ner.train.spacy, ner.dev.spacy (model selection) and ner.eval.spacy (the reported score), OUT_DIR/senses.json
(sentences with an ambiguous word, labelled by sense from the cue words around it) and
OUT_DIR/source.json, and prints which source it used.
"""

import gzip
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Tuple

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
# The demo's ambiguous word, its senses and the cue words that label an occurrence.
WORD = "play"
SENSE_CUES = {
    "sport": {"match", "team", "game", "games", "season", "league", "football", "cricket", "rugby", "tennis", "golf", "soccer",
              "cup", "coach", "players", "goal", "goals", "scored", "squad", "championship", "tournament", "ball",
              "pitch", "innings", "striker", "midfield", "fixture", "opponents"},
    "stage and music": {"music", "piano", "guitar", "violin", "song", "songs", "band", "stage", "theatre", "theater", "actor",
                        "actors", "actress", "audience", "orchestra", "concert", "musical", "drama", "playwright", "comedy",
                        "tragedy", "scene", "opera", "instrument", "tune", "flute", "organ", "harp", "sing", "sang", "broadway"},
}  # fmt: skip
SYNTHETIC_SENSES = {
    "sport": [
        "{PER} will play for {ORG} against {ORG} in the cup final .",
        "The team will play {ORG} in {LOC} next season .",
    ],
    "stage and music": [
        "{PER} will play the piano at a concert in {LOC} .",
        "The band will play new songs on stage in {LOC} .",
    ],
}


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


def _fill(template: str, rng: random.Random) -> List[str]:
    fillers = {"PER": PEOPLE, "LOC": PLACES, "ORG": ORGS}
    words: List[str] = []
    for piece in template.split():
        words.extend(rng.choice(fillers[piece[1:-1]]).split() if piece.startswith("{") else [piece])
    return words


def synthetic_senses(n: int, seed: int) -> Dict[str, List[List[str]]]:
    rng = random.Random(seed)
    return {
        sense: [_fill(rng.choice(templates), rng) for _ in range(n)] for sense, templates in SYNTHETIC_SENSES.items()
    }


def labelled_senses(paragraphs: Iterable[str], per_sense: int, max_tokens: int = 50) -> Dict[str, List[List[str]]]:
    """Sentences holding WORD (lower case), labelled by the one sense whose cue words they hold."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    found: Dict[str, List[List[str]]] = {sense: [] for sense in SENSE_CUES}
    texts = (text for text in paragraphs if f" {WORD} " in text.lower())
    for doc in nlp.pipe(texts, batch_size=64):
        for sent in doc.sents:
            words = [t.text for t in sent if not t.is_space]
            lower = {w.lower() for w in words}
            senses = [sense for sense, cues in SENSE_CUES.items() if lower & cues]
            if WORD in words and len(senses) == 1 and len(words) <= max_tokens and len(found[senses[0]]) < per_sense:
                found[senses[0]].append(words)
        if all(len(v) >= per_sense for v in found.values()):
            break
    return found


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
    lm_lines: int = typer.Option(60000, help="Raw-text lines for pretraining (news and books, interleaved)."),
    ner_sentences: int = typer.Option(
        250, help="NER training sentences, drawn at random from eng.train (few: where contextual features help most)."
    ),
    ner_dev_sentences: int = typer.Option(
        500, help="NER model-selection sentences (the start of CoNLL-2003 eng.testa)."
    ),
    ner_eval_sentences: int = typer.Option(
        2000, help="NER sentences the demo reports on (the next ones of eng.testa)."
    ),
    sense_sentences: int = typer.Option(60, help="Sentences per sense of the ambiguous word."),
    seed: int = 0,
) -> None:
    started = time.time()
    out_dir.mkdir(parents=True, exist_ok=True)
    lm, conll = data_dir / "lm", data_dir / "ner" / "conll2003"
    text_files = [lm / "news.train.txt.gz", lm / "books.train.txt.gz"]
    if all(f.exists() for f in text_files) and (conll / "eng.train").exists():
        real = True
        source = f"real data from {data_dir} (news and books text, CoNLL-2003 eng.train / eng.testa)"
        train_text = _interleaved(text_files, lm_lines)
        dev_text = _lines(lm / "news.valid.txt.gz", 300)
        train_sentences = list(read_conll2003(conll / "eng.train"))
        ner_train = iter(random.Random(seed).sample(train_sentences, min(ner_sentences, len(train_sentences))))
        testa = list(read_conll2003(conll / "eng.testa", ner_dev_sentences + ner_eval_sentences))
        ner_dev, ner_eval = testa[:ner_dev_sentences], testa[ner_dev_sentences:]
        senses = labelled_senses(_interleaved(text_files, 10**9), sense_sentences)
    else:
        real = False
        source = (
            f"a synthetic sample ({data_dir} has no news/books text or CoNLL-2003): figures show the machinery only"
        )
        sense_text = [" ".join(w) for v in synthetic_senses(lm_lines // 10, seed + 4).values() for w in v]
        train_text = [" ".join(w) for w, _ in synthetic_sentences(lm_lines, seed)] + sense_text
        random.Random(seed).shuffle(train_text)
        dev_text = [" ".join(w) for w, _ in synthetic_sentences(300, seed + 1)]
        ner_train = synthetic_sentences(ner_sentences, seed + 2)
        ner_dev = synthetic_sentences(ner_dev_sentences, seed + 3)
        ner_eval = synthetic_sentences(ner_eval_sentences, seed + 6)
        senses = synthetic_senses(sense_sentences, seed + 5)
    (out_dir / "lm.train.txt").write_text("\n".join(train_text) + "\n", encoding="utf-8")
    (out_dir / "lm.dev.txt").write_text("\n".join(dev_text) + "\n", encoding="utf-8")
    ner_train, ner_dev, ner_eval = to_docbin(ner_train), to_docbin(ner_dev), to_docbin(ner_eval)
    ner_train.to_disk(out_dir / "ner.train.spacy")
    ner_dev.to_disk(out_dir / "ner.dev.spacy")
    ner_eval.to_disk(out_dir / "ner.eval.spacy")
    (out_dir / "senses.json").write_text(json.dumps({"word": WORD, "senses": senses}) + "\n", encoding="utf-8")
    info = {
        "real_data": real,
        "source": source,
        "started_at": started,
        "ner_train_sentences": len(ner_train),
        "ner_eval_sentences": len(ner_eval),
    }
    (out_dir / "source.json").write_text(json.dumps(info) + "\n", encoding="utf-8")
    counts = ", ".join(f"{len(v)} {k}" for k, v in senses.items())
    typer.echo(f"demo data: {source} -> {out_dir} ({len(train_text)} text lines; '{WORD}': {counts})")


def _interleaved(paths: List[Path], n: int) -> List[str]:
    """Up to n non-empty lines, one from each file in turn."""
    readers = [_iter_lines(p) for p in paths]
    lines: List[str] = []
    for line in itertools.chain.from_iterable(itertools.zip_longest(*readers)):
        if line:
            lines.append(line)
            if len(lines) >= n:
                break
    return lines


def _iter_lines(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield line.strip()


if __name__ == "__main__":
    typer.run(main)
