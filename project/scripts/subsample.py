"""Keep a fixed random fraction of a DocBin's docs (for sample-efficiency runs).

    python project/scripts/subsample.py IN.spacy OUT.spacy --fraction 0.1 --seed 0
"""
import random
from pathlib import Path

import spacy
import typer
from spacy.tokens import DocBin


def main(
    input_path: Path = typer.Argument(..., exists=True, dir_okay=False),
    output_path: Path = typer.Argument(...),
    fraction: float = typer.Option(..., min=0.0, max=1.0),
    seed: int = 0,
) -> None:
    docs = list(DocBin().from_disk(input_path).get_docs(spacy.blank("en").vocab))
    keep = max(1, round(fraction * len(docs)))
    chosen = sorted(random.Random(seed).sample(range(len(docs)), keep))
    DocBin(docs=[docs[i] for i in chosen]).to_disk(output_path)
    typer.echo(f"kept {keep} of {len(docs)} docs -> {output_path}")


if __name__ == "__main__":
    typer.run(main)
