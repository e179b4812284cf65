"""`package-bilm` and `info`: biLMs as installable packages, and the ones installed."""

import json
from pathlib import Path

import typer

from ..formats.packages import DEFAULT_BILM, describe_installed, package_bilm
from . import app
from ._util import USAGE_ERROR, fail


@app.command("package-bilm", short_help="Build a pip-installable package (wheel and sdist) of a biLM folder.")
def package_bilm_cli(
    bilm_dir: Path = typer.Argument(..., help="A biLM folder: options.json and weights.hdf5 (or lm_weights.hdf5)."),
    output_dir: Path = typer.Argument(..., help="Where the wheel and the sdist go."),
    name: str = typer.Option(DEFAULT_BILM, help="Package name, also the name a pipeline config uses (model.bilm)."),
    version: str = typer.Option("0.1.0", help="Package version."),
) -> None:
    """Build NAME-VERSION's wheel and sdist from BILM_DIR into OUTPUT_DIR. The package holds
    the folder's options.json, weights, softmax_weights.hdf5 and vocab.txt (for fine-tuning)
    where present, README.md, perplexity.json, and a meta.json (sizes, parameters, the
    folder's meta.json: training text, tokens, licence). Installed, it is found by name:
    nlp.add_pipe("elmo", config={"model": {"bilm": NAME}}); the name en_elmo_small is the
    component's default.

    Example: python -m spacy_elmo package-bilm project/report/bilm packages --name en_elmo_small --version 0.3.0
    """
    if not bilm_dir.is_dir():
        fail(f"biLM folder not found: {bilm_dir}. Pass a folder with options.json and weights.hdf5.", USAGE_ERROR)
    try:
        built = package_bilm(bilm_dir, output_dir, name, version)
    except (FileNotFoundError, ValueError, RuntimeError) as err:
        fail(str(err))
    for path in built:
        typer.echo(f"Built {path}")
    wheel = next((p for p in built if p.suffix == ".whl"), None)
    if wheel is not None:
        typer.echo(f"Install with: pip install {wheel}")


@app.command("info", short_help="List the installed biLM packages.")
def info_cli(as_json: bool = typer.Option(False, "--json", help="Print the packages' meta as JSON.")) -> None:
    """List the installed biLM packages (entry point group spacy_elmo_bilms): name, version,
    parameters, perplexities and folder.

    Example: python -m spacy_elmo info
    """
    rows = describe_installed()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo(
            f"No biLM packages installed. Build one with: python -m spacy_elmo package-bilm BILM_DIR OUTPUT_DIR --name {DEFAULT_BILM}"
        )
        return
    for row in rows:
        meta = row["meta"]
        parameters = f"{row['parameters'] / 1e6:.1f}M parameters" if row["parameters"] else "parameters unknown"
        default = " (default)" if row["name"] == DEFAULT_BILM else ""
        typer.echo(f"{row['name']} {row['version']}{default}: {parameters}; {row['folder']}")
        for text, figures in meta.get("perplexity", {}).items():
            typer.echo(f"  perplexity {text}: {figures['mean']:.1f}")
        for key in ("training_text", "license"):
            if key in meta:
                typer.echo(f"  {key.replace('_', ' ')}: {meta[key]}")
