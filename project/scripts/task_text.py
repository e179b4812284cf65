"""Write the text of a task's training corpus as whitespace-tokenised lines, for domain adaptation.

    python project/scripts/task_text.py CORPUS.spacy OUTPUT.txt

One line per sentence where the docs have sentence boundaries, else per doc: the input of
`python -m spacy_elmo pretrain --paths.init_bilm ...` with the WhitespaceSentences tokenizer.
Only pass training corpora here: the biLM must never see dev or test text.
"""

from pathlib import Path

import spacy
import typer
from spacy.tokens import DocBin


def write_text(corpus: Path, output: Path) -> int:
    """Write CORPUS's sentences to OUTPUT, one per line; return the number of tokens."""
    nlp = spacy.blank("en")
    n_tokens = 0
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf8") as out:
        for doc in DocBin().from_disk(corpus).get_docs(nlp.vocab):
            spans = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
            for span in spans:
                words = [token.text for token in span if not token.is_space]
                if words:
                    out.write(" ".join(words) + "\n")
                    n_tokens += len(words)
    return n_tokens


def main(corpus: Path = typer.Argument(..., exists=True, dir_okay=False), output: Path = typer.Argument(...)) -> None:
    n_tokens = write_text(corpus, output)
    typer.echo(f"{output}: {n_tokens:,} tokens from {corpus}")


if __name__ == "__main__":
    typer.run(main)
