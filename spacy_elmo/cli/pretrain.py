"""`pretrain`: train a biLM on raw text (spaCy-style config with overrides, like `spacy train`)."""

from pathlib import Path
from typing import Optional

import typer

from ..devices import DeviceError, torch_device
from ..pretrain.config import load_settings
from ..pretrain.corpus import CorpusError
from ..pretrain.train import TrainingDiverged, TrainingStopped, pretrain
from . import app
from ._util import USAGE_ERROR, config_overrides, fail


@app.command(
    "pretrain",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    short_help="Train a biLM (forward and backward LMs) on raw text.",
)
def pretrain_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Pretraining config, e.g. project/configs/pretrain_tiny.cfg."),
    output_dir: Path = typer.Argument(
        ..., help="Folder for vocab.txt, metrics.jsonl, checkpoint.pt, model-last, model-best."
    ),
    gpu_id: Optional[int] = typer.Option(
        None,
        "--gpu-id",
        "-g",
        help="GPU to train on; -1: the CPU. Sets system.device (default: the config's, auto: cuda when available).",
    ),
) -> None:
    """Train ELMo's forward and backward LMs on raw text. Reads the config and the text
    files it names (.txt, .txt.gz, .jsonl, folders); writes OUTPUT_DIR/model-best and
    model-last (options.json + weights.hdf5, AllenNLP's layout, with vocab.txt and the
    softmax), metrics.jsonl and checkpoint.pt (a rerun resumes from it). Override any setting
    with --section.key value, e.g. --paths.train text.txt.gz --training.max_steps 1000.
    Run under `torchrun --nproc_per_node N -m spacy_elmo pretrain ...` to use N processes.

    Example: python -m spacy_elmo pretrain project/configs/pretrain_tiny.cfg out/ --paths.train text.txt.gz --paths.dev dev.txt --gpu-id 0
    """
    overrides = config_overrides(ctx.args, "--gpu-id N")
    if gpu_id is not None:
        try:
            torch_device(gpu_id)
        except DeviceError as err:
            fail(str(err))
        overrides["system.device"] = "cpu" if gpu_id == -1 else f"cuda:{gpu_id}"
    try:
        settings = load_settings(config_path, overrides)
    except (FileNotFoundError, ValueError) as err:  # the config or an override is wrong
        fail(str(err), USAGE_ERROR)
    try:
        record = pretrain(settings, output_dir)
    except (CorpusError, TrainingDiverged, FileNotFoundError, ValueError) as err:
        fail(str(err))
    except TrainingStopped as stopped:  # SIGINT/SIGTERM: the checkpoint of that step is written
        raise typer.Exit(stopped.exit_code) from None
    if record:
        typer.echo(
            f"Done at step {record['step']}: train loss {record['train_loss']:.4f}, dev perplexity {record.get('dev_perplexity')}"
        )
