"""`python -m spacy_elmo COMMAND`: the command-line interface."""
import typer

app = typer.Typer(
    name="spacy-elmo",
    help="ELMo biLMs for spaCy. Commands: pretrain (train a biLM on raw text), perplexity (score a pretrained "
    "biLM on text), embed (ELMo vectors of a file's sentences to HDF5, as allennlp elmo writes them), init-config "
    "(a spacy train config with the elmo component). Run COMMAND --help for what each reads and writes.",
    no_args_is_help=True,
)


@app.callback()
def _main() -> None:
    """ELMo biLMs for spaCy: pretrain, perplexity, embed, init-config."""


from . import embed, init_config, perplexity, pretrain  # noqa: E402,F401  (registers commands)

__all__ = ["app"]
