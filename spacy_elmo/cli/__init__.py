"""`python -m spacy_elmo COMMAND`: the command-line interface."""
import typer

app = typer.Typer(name="spacy-elmo", help="ELMo biLMs for spaCy: pretrain, evaluate, embed.", no_args_is_help=True)


@app.callback()
def _main() -> None:
    """ELMo biLMs for spaCy."""


from . import perplexity, pretrain  # noqa: E402,F401  (registers commands)

__all__ = ["app"]
