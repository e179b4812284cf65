"""`pretrain`: train a biLM on raw text (spaCy-style config with overrides, like `spacy train`)."""
from pathlib import Path

import typer
from spacy.cli._util import parse_config_overrides

from ..pretrain.corpus import CorpusError
from ..pretrain.config import load_settings
from ..pretrain.train import TrainingDiverged, TrainingStopped, pretrain
from . import app


@app.command("pretrain", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def pretrain_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Pretraining config, e.g. project/configs/pretrain_tiny.cfg."),
    output_dir: Path = typer.Argument(..., help="Folder for vocab.txt, metrics.jsonl, checkpoint.pt, model-last, model-best."),
) -> None:
    """Train ELMo's forward and backward LMs on raw text. Override any setting with
    --section.key value, e.g. --paths.train text.txt.gz --training.max_steps 1000.
    Run under `torchrun --nproc_per_node N -m spacy_elmo pretrain ...` to use N processes."""
    overrides = parse_config_overrides(ctx.args)
    try:
        settings = load_settings(config_path, overrides)
        record = pretrain(settings, output_dir)
    except (CorpusError, TrainingDiverged, FileNotFoundError, ValueError) as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(1)
    except TrainingStopped as stopped:  # SIGINT/SIGTERM: the checkpoint of that step is written
        raise typer.Exit(stopped.exit_code)
    if record:
        typer.echo(f"Done at step {record['step']}: train loss {record['train_loss']:.4f}, dev perplexity {record.get('dev_perplexity')}")
