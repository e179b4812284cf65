"""`python -m spacy_elmo COMMAND`: the command-line interface."""

import typer

from ._util import SHOW_TRACEBACKS

app = typer.Typer(
    name="spacy-elmo",
    help="ELMo biLMs for spaCy. Commands: pretrain (train a biLM on raw text), perplexity (score a pretrained "
    "biLM on text), embed (ELMo vectors of a file's sentences to HDF5, as allennlp elmo writes them), init-config "
    "(a spacy train config with the elmo component), package-bilm (a biLM folder as a pip-installable package), info "
    "(the installed biLM packages). Run COMMAND --help for what each reads and writes.",
    no_args_is_help=True,
)


@app.callback()
def _main(
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Print the traceback of an error as well (before COMMAND)."
    ),
) -> None:
    """ELMo biLMs for spaCy: pretrain, perplexity, embed, init-config, package-bilm, info."""
    SHOW_TRACEBACKS["enabled"] = verbose


from . import embed, init_config, packages, perplexity, pretrain  # noqa: E402,F401  (registers commands)

__all__ = ["app"]
