"""What the commands share: error exits and the biLM given as a folder or as two files."""

import sys
import traceback
from pathlib import Path
from typing import Any, Dict, List, NoReturn, Optional, Tuple

import typer
from click.exceptions import NoSuchOption
from spacy.cli._util import parse_config_overrides
from spacy.util import get_lang_class

from ..formats import OPTIONS, find_weights

USAGE_ERROR = 2  # the options are wrong; 1: the input, the model or the device failed
SHOW_TRACEBACKS = {"enabled": False}  # set by the app's --verbose


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``Error: message`` on stderr and exit with ``code``; the traceback of the error
    being handled only with --verbose."""
    if SHOW_TRACEBACKS["enabled"] and sys.exc_info()[0] is not None:
        traceback.print_exc()
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


def config_overrides(args: List[str], options: str) -> Dict[str, Any]:
    """spaCy-style ``--section.key value`` overrides; an unknown option is a usage error that
    names the command's own ``options`` and the override form."""
    try:
        return parse_config_overrides(list(args))
    except NoSuchOption as err:
        fail(
            f"No such option: {err.option_name}. This command takes {options} and config settings as --section.key value "
            "(e.g. --system.threads 1, --training.max_steps 1000).",
            USAGE_ERROR,
        )


def bilm_files(
    folder: Optional[Path], options: Optional[Path] = None, weights: Optional[Path] = None
) -> Tuple[Path, Path]:
    """(options.json, weight file) of a biLM given as a folder or as --options and --weights;
    a usage error unless exactly one of the two forms is given, a failure if files are missing."""
    if folder is not None and (options is not None or weights is not None):
        fail("Give the biLM either as a folder (BILM or --bilm) or as --options and --weights, not both.", USAGE_ERROR)
    if folder is None:
        if options is None or weights is None:
            fail(
                "No biLM: pass a folder with options.json and weights.hdf5 (BILM or --bilm DIR, e.g. a pretraining "
                "run's model-best), or both --options and --weights.",
                USAGE_ERROR,
            )
        for path, what in ((options, "options file"), (weights, "weight file")):
            if not path.is_file():
                fail(f"ELMo {what} not found: {path}. Pass the path of an existing file.")
        return options, weights
    if not folder.is_dir():
        fail(f"biLM folder not found: {folder}. Pass a folder with {OPTIONS} and weights.hdf5 (or lm_weights.hdf5).")
    try:
        return folder / OPTIONS, find_weights(folder)
    except FileNotFoundError as err:
        fail(str(err))


def check_lang(lang: str) -> None:
    """A --lang that spaCy has no language class for: the one-line usage error."""
    try:
        get_lang_class(lang)
    except ImportError:
        fail(
            f"--lang {lang!r} is not a language code spaCy knows; use one such as en, de or xx (multi-language).",
            USAGE_ERROR,
        )
