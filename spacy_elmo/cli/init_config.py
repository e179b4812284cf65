"""`init-config`: a complete `spacy train` config with the elmo component and its listeners."""

import sys
from pathlib import Path

import typer

from ..atomic import atomic_write
from ..formats import ElmoFormatError
from ..init_config import OPTIMIZE, init_config, task_components
from . import app
from ._util import USAGE_ERROR, bilm_files, check_lang, fail


@app.command(
    "init-config", short_help="Write a spacy train config with the elmo component and one ELMo listener per task."
)
def init_config_cli(
    output_file: str = typer.Argument(
        ..., metavar="OUTPUT", help="The config file to write, e.g. config.cfg (- for stdout)."
    ),
    pipeline: str = typer.Option(
        ..., "--pipeline", "-p", help=f"Task components, comma-separated: {', '.join(task_components())}."
    ),
    bilm: Path = typer.Option(..., "--bilm", help="biLM folder: options.json + weights.hdf5 (or lm_weights.hdf5)."),
    optimize: str = typer.Option(
        "efficiency", "--optimize", "-o", help=f"{' or '.join(OPTIMIZE)}: the size of each task's tok2vec."
    ),
    gpu: bool = typer.Option(
        False, "--gpu", "-G", help="For training on a GPU: gpu_allocator = pytorch, biLM calls of 16,384 tokens."
    ),
    lang: str = typer.Option("en", "--lang", "-l", help="The pipeline's language."),
) -> None:
    """Write a complete `spacy train` config: the elmo component reading the biLM folder
    (paths.elmo_options and paths.elmo_weights are its files, absolute) and each task
    component with its own ElmoListener in a spacy-elmo.ElmoTok2Vec.v1 (hash embeddings +
    the task's mix of the biLM layers + a CNN encoder), filled in by spaCy. Reads the biLM's
    options.json (to check it); writes OUTPUT. Train it with --paths.train and --paths.dev.

    Example: python -m spacy_elmo init-config config.cfg --pipeline ner,textcat --bilm out/model-best
    """
    names = [name.strip() for name in pipeline.split(",") if name.strip()]
    if optimize not in OPTIMIZE:
        fail(f"--optimize must be {' or '.join(OPTIMIZE)}, got {optimize!r}.", USAGE_ERROR)
    bilm_files(bilm)  # a folder with options.json and weights, else the one-line error
    check_lang(lang)
    known = task_components()
    if not names or any(name not in known for name in names) or len(set(names)) != len(names):
        fail(
            f"--pipeline takes distinct task components from {', '.join(known)}, comma-separated (e.g. ner,textcat); got {pipeline!r}.",
            USAGE_ERROR,
        )
    try:
        config = init_config(names, bilm, optimize=optimize, gpu=gpu, lang=lang)
    except (ElmoFormatError, FileNotFoundError) as err:
        fail(str(err))
    header = f"# Written by: python -m spacy_elmo init-config --pipeline {','.join(names)} --bilm {bilm} --optimize {optimize} --lang {lang}{' --gpu' if gpu else ''}\n"
    text = header + config.to_str(interpolate=False) + "\n"
    if output_file == "-":
        sys.stdout.write(text)
        return
    output = Path(output_file)
    atomic_write(output, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    typer.echo(
        f"Wrote {output}: elmo + {', '.join(names)}. Train it with: python -m spacy train {output} --paths.train TRAIN.spacy --paths.dev DEV.spacy"
    )
