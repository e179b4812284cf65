"""`embed`: ELMo vectors of every sentence of a file, in allennlp elmo's HDF5 layout."""

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import List, Optional

import typer

from ..devices import DeviceError, torch_device
from ..embed import OUTPUTS, EmbedError, check_mix, docbin_sentences, embed, line_sentences, read_lines, text_sentences
from ..formats import ElmoFormatError, load_bilm
from . import app
from ._util import USAGE_ERROR, bilm_files, check_lang, fail


@app.command("embed", short_help="ELMo vectors of every sentence of a file to HDF5, as allennlp elmo writes them.")
def embed_cli(
    input_path: str = typer.Argument(
        ...,
        metavar="INPUT",
        help="Sentences: a text file with one sentence per line, tokens separated by spaces (raw text with --tokenize), "
        "a DocBin (.spacy), or - for stdin. UTF-8.",
    ),
    output_path: Path = typer.Argument(..., metavar="OUTPUT", help="The HDF5 file to write, e.g. vectors.hdf5."),
    bilm_dir: Optional[Path] = typer.Argument(
        None, metavar="BILM", help="biLM folder: options.json + weights.hdf5 (or lm_weights.hdf5)."
    ),
    bilm: Optional[Path] = typer.Option(None, "--bilm", help="The biLM folder, as an option."),
    options: Optional[Path] = typer.Option(
        None, "--options", help="The biLM's options.json (with --weights), instead of a folder."
    ),
    weights: Optional[Path] = typer.Option(None, "--weights", help="The biLM's weight file (with --options)."),
    all_layers: bool = typer.Option(
        False, "--all", help="Write every layer, (n_layers, tokens, dim) per sentence (the default)."
    ),
    top: bool = typer.Option(False, "--top", help="Write the top layer, (tokens, dim) per sentence."),
    average: bool = typer.Option(False, "--average", help="Write the mean of the layers, (tokens, dim) per sentence."),
    mix: Optional[str] = typer.Option(
        None,
        "--mix",
        metavar="W0,W1,...",
        help="Write gamma * sum_j W_j * layer_j, (tokens, dim) per sentence. One weight per layer, used as given "
        "(not softmax-normalised), like the elmo component's layer_weights.",
    ),
    gamma: Optional[float] = typer.Option(None, "--gamma", help="The scale of --mix (default 1)."),
    tokenize: bool = typer.Option(
        False, "--tokenize", help="INPUT is raw text: spaCy's tokenizer and sentencizer split each line into sentences."
    ),
    lang: str = typer.Option("en", "--lang", help="Language of the tokenizer (--tokenize) and of the DocBin's vocab."),
    max_batch_tokens: int = typer.Option(
        4096, "--max-batch-tokens", help="Padded tokens per biLM call (batch size x longest sentence)."
    ),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU to run on; -1: the CPU."),
    forget_sentences: bool = typer.Option(
        False,
        "--forget-sentences",
        help="Leave out the sentence_to_index dataset (it holds the input's text in memory).",
    ),
    progress: bool = typer.Option(
        True, "--progress/--no-progress", help="A progress bar on stderr (sentences, tokens/s)."
    ),
) -> None:
    """Write the ELMo vectors of every sentence of INPUT to OUTPUT, an HDF5 file in the layout
    of `allennlp elmo`: one float32 dataset per sentence named by its index ("0", "1", ...)
    and "sentence_to_index", a JSON string {sentence: "index"}. Each sentence is one biLM
    sequence in <S> .. </S>. With --tokenize a sentence's key is its tokens joined by spaces;
    in a DocBin each Doc's sentences (the whole Doc without sentence boundaries) are the
    sentences and every token is a row (whitespace tokens zero). OUTPUT appears only when
    complete. Exit code 2: wrong options; 1: the input, the biLM or the device failed.

    Example: python -m spacy_elmo embed sentences.txt vectors.hdf5 out/model-best --top
    """
    chosen = [
        name
        for name, flag in (("all", all_layers), ("top", top), ("average", average), ("mix", mix is not None))
        if flag
    ]
    if len(chosen) > 1:
        fail(f"Choose one output of --{', --'.join(OUTPUTS)}; got --{' and --'.join(chosen)}.", USAGE_ERROR)
    output = chosen[0] if chosen else "all"
    if gamma is not None and mix is None:
        fail("--gamma scales a --mix; pass --mix W0,W1,... too (or leave out --gamma).", USAGE_ERROR)
    mix_weights = _parse_mix(mix) if mix is not None else None
    if max_batch_tokens < 1:
        fail(f"--max-batch-tokens must be at least 1, got {max_batch_tokens}.", USAGE_ERROR)
    if bilm_dir is not None and bilm is not None:
        fail("Give the biLM folder once: as BILM or as --bilm.", USAGE_ERROR)
    if output_path.is_dir():
        fail(
            f"OUTPUT {output_path} is a folder; pass the path of the HDF5 file to write, e.g. {output_path / 'vectors.hdf5'}.",
            USAGE_ERROR,
        )
    check_lang(lang)
    is_docbin = input_path != "-" and input_path.endswith(".spacy")
    if is_docbin and tokenize:
        fail(f"{input_path} is a DocBin, already tokenized; leave out --tokenize.", USAGE_ERROR)
    options_file, weight_file = bilm_files(bilm_dir or bilm, options, weights)
    try:
        device = torch_device(gpu_id)
        model = load_bilm(options_file, weight_file)
    except (DeviceError, ElmoFormatError, FileNotFoundError) as err:
        fail(str(err))
    try:
        check_mix(mix_weights, model.config.n_output_layers)
    except ValueError as err:
        fail(str(err), USAGE_ERROR)
    name = "stdin" if input_path == "-" else input_path
    if input_path != "-" and not Path(input_path).is_file():
        fail(f"Input not found: {input_path}. Pass a text file, a .spacy DocBin, or - to read stdin.")
    with ExitStack() as stack:
        if is_docbin:
            sentences = docbin_sentences(Path(input_path), lang)
        else:
            stream = sys.stdin.buffer if input_path == "-" else stack.enter_context(open(input_path, "rb"))
            lines = read_lines(stream, name)
            sentences = text_sentences(lines, lang) if tokenize else line_sentences(lines, name)
        try:
            summary = embed(
                sentences, model, output_path, output=output, mix=mix_weights, gamma=1.0 if gamma is None else gamma,
                device=device, max_batch_tokens=max_batch_tokens, forget_sentences=forget_sentences, progress=progress,
            )  # fmt: skip
        except (EmbedError, OSError) as err:
            fail(str(err))
    typer.echo(
        f"Wrote {summary.n_sentences:,} sentences ({summary.n_tokens:,} tokens, --{output}) to {output_path} "
        f"in {summary.seconds:.1f} s ({summary.tokens_per_second:,.0f} tokens/s)."
    )


def _parse_mix(text: str) -> List[float]:
    try:
        return [float(w) for w in text.split(",")]
    except ValueError:
        fail(
            f"--mix takes comma-separated numbers, one weight per biLM layer, e.g. --mix 0.2,0.3,0.5; got {text!r}.",
            USAGE_ERROR,
        )
