"""Keep a fixed random fraction of a DocBin's docs (for sample-efficiency runs).

    python project/scripts/subsample.py IN.spacy OUT.spacy --fraction 0.1 --seed 0 [--rest REST.spacy]

With --rest the docs not chosen go to REST.spacy (a disjoint split, e.g. train/dev).
"""

import random
from pathlib import Path
from typing import Optional

import spacy
import typer
from spacy.tokens import DocBin


def main(
    input_path: Path = typer.Argument(..., exists=True, dir_okay=False),
    output_path: Path = typer.Argument(...),
    fraction: float = typer.Option(..., min=0.0, max=1.0),
    seed: int = 0,
    rest: Optional[Path] = typer.Option(None, help="Write the docs not chosen here."),
) -> None:
    docs = list(DocBin().from_disk(input_path).get_docs(spacy.blank("en").vocab))
    keep = max(1, round(fraction * len(docs)))
    chosen = set(random.Random(seed).sample(range(len(docs)), keep))
    DocBin(docs=[doc for i, doc in enumerate(docs) if i in chosen]).to_disk(output_path)
    typer.echo(f"kept {keep} of {len(docs)} docs -> {output_path}")
    if rest is not None:
        DocBin(docs=[doc for i, doc in enumerate(docs) if i not in chosen]).to_disk(rest)
        typer.echo(f"the other {len(docs) - keep} docs -> {rest}")


if __name__ == "__main__":
    typer.run(main)
