"""`perplexity`: evaluate a pretrained biLM's forward and backward LMs on text."""

import json
from pathlib import Path
from typing import Optional

import typer
from confection import Config

from ..devices import DeviceError, torch_device
from ..pretrain.config import resolve_settings
from ..pretrain.corpus import CorpusError, TextLines
from ..pretrain.evaluate import perplexity, text_sentences
from ..pretrain.export import CONFIG, load_model_dir
from ..pretrain.sentences import spacy_sentences
from . import app
from ._util import USAGE_ERROR, fail


@app.command("perplexity", short_help="Score a pretrained biLM's forward and backward LMs on text.")
def perplexity_cli(
    model_dir: Path = typer.Argument(..., help="A model folder written by pretrain (model-best or model-last)."),
    text: Path = typer.Argument(..., help="Text to score: .txt, .txt.gz, .jsonl or a folder."),
    batch_size: int = typer.Option(64, help="Sentences per batch."),
    max_sentences: int = typer.Option(0, help="Score only this many sentences (0: all)."),
    output: Optional[Path] = typer.Option(None, help="Also write the result to this JSON file."),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1: the CPU."),
) -> None:
    """Print forward, backward and mean perplexity (full softmax, sentences scored independently)
    as one JSON line. Reads MODEL_DIR (options.json, weights.hdf5, softmax_weights.hdf5,
    vocab.txt, config.cfg) and TEXT, tokenized as the model's config.cfg says (spaCy's blank
    English tokenizer if absent); writes --output if given.

    Example: python -m spacy_elmo perplexity out/model-best test.txt --output ppl.json
    """
    if not text.exists():
        fail(
            f"TEXT not found: {str(text)!r}. perplexity scores the text of a file or folder (.txt, .txt.gz, .jsonl): "
            "write the sentences to a file and pass its path.",
            USAGE_ERROR,
        )
    try:
        device = torch_device(gpu_id)
        lm, vocab = load_model_dir(model_dir)
        lm.to(device)
        config_file = model_dir / CONFIG
        if config_file.is_file():
            settings = resolve_settings(Config().from_disk(config_file, interpolate=False))
            splitter, data = settings.tokenizer, settings.data
            lines = TextLines(text, max_line_bytes=data.max_line_bytes, text_field=data.text_field)
        else:
            splitter, lines = spacy_sentences(), TextLines(text)
        result = perplexity(
            lm, text_sentences(lines, splitter), vocab, batch_size=batch_size, max_sentences=max_sentences
        )
    except (CorpusError, DeviceError, FileNotFoundError, ValueError) as err:
        fail(str(err))
    if lines.describe_skipped():
        typer.echo(f"Warning: {lines.describe_skipped()}", err=True)
    figures = {**result.to_dict(), "model": str(model_dir), "text": str(text)}
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    typer.echo(json.dumps(figures))
