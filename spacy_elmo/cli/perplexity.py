"""`perplexity`: evaluate a pretrained biLM's forward and backward LMs on text."""
import json
from pathlib import Path
from typing import Optional

import typer
from confection import Config

from ..pretrain.config import resolve_settings
from ..pretrain.corpus import CorpusError, TextLines
from ..pretrain.evaluate import perplexity, text_sentences
from ..pretrain.export import CONFIG, load_model_dir
from ..pretrain.sentences import spacy_sentences
from . import app


@app.command("perplexity")
def perplexity_cli(
    model_dir: Path = typer.Argument(..., help="A model folder written by pretrain (model-best or model-last)."),
    text: Path = typer.Argument(..., help="Text to score: .txt, .txt.gz, .jsonl or a folder."),
    batch_size: int = typer.Option(64, help="Sentences per batch."),
    max_sentences: int = typer.Option(0, help="Score only this many sentences (0: all)."),
    output: Optional[Path] = typer.Option(None, help="Also write the result to this JSON file."),
) -> None:
    """Print forward, backward and mean perplexity (full softmax, sentences scored independently),
    tokenizing the text as the model's config.cfg says (spaCy's blank English tokenizer if absent)."""
    try:
        lm, vocab = load_model_dir(model_dir)
        config_file = model_dir / CONFIG
        if config_file.is_file():
            settings = resolve_settings(Config().from_disk(config_file, interpolate=False))
            splitter, max_line_bytes = settings.tokenizer, settings.data.max_line_bytes
        else:
            splitter, max_line_bytes = spacy_sentences(), 1_000_000
        lines = TextLines(text, max_line_bytes=max_line_bytes)
        result = perplexity(lm, text_sentences(lines, splitter), vocab, batch_size=batch_size, max_sentences=max_sentences)
    except (CorpusError, FileNotFoundError, ValueError) as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(1)
    if lines.describe_skipped():
        typer.echo(f"Warning: {lines.describe_skipped()}", err=True)
    figures = {**result.to_dict(), "model": str(model_dir), "text": str(text)}
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    typer.echo(json.dumps(figures))
