"""`demo`: load a biLM and print ELMo vectors for a sentence."""
from pathlib import Path
from typing import Optional

import torch
import typer

from ..chars import CharacterIds
from ..formats.allennlp import load_bilm
from ..model import BiLM, ScalarMix, preset
from . import app

DEFAULT_FIXTURE = Path("../shared/data/elmo_fixtures/allennlp")


@app.command("demo")
def demo_cli(
    text: str = typer.Option("The biLM reads the sentence both ways .", help="Whitespace-tokenised sentence."),
    model_dir: Optional[Path] = typer.Option(None, help="Folder with options.json and a weights hdf5 file."),
) -> None:
    """Print the ELMo layers and the equal-weight mix for one sentence."""
    model = _find_model(model_dir)
    tokens = text.split()
    char_ids = torch.from_numpy(CharacterIds(model.config.max_characters_per_token).batch([tokens]))
    with torch.no_grad():
        out = model.eval()(char_ids)
        mixed = ScalarMix(model.config.n_output_layers)(out.layers, out.mask)[0]
    typer.echo(f"layers: {tuple(out.layers.shape)} (layers, batch, tokens, 2 x projection_dim)")
    for token, vector in zip(tokens, mixed):
        shown = " ".join(f"{v:+.3f}" for v in vector[:6].tolist())
        typer.echo(f"{token:>12}  [{shown} ...]  |v|={vector.norm():.3f}")


def _find_model(model_dir: Optional[Path]) -> BiLM:
    folder = model_dir or DEFAULT_FIXTURE
    if (folder / "options.json").exists():
        weights = next((p for p in (folder / "weights.hdf5", folder / "lm_weights.hdf5") if p.exists()), None)
        if weights is None:
            raise typer.BadParameter(f"{folder} has options.json but no weights.hdf5 or lm_weights.hdf5.")
        typer.echo(f"biLM: {folder}")
        return load_bilm(folder / "options.json", weights)
    if model_dir is not None:
        raise typer.BadParameter(f"{model_dir} has no options.json; pass a folder holding an ELMo model.")
    typer.echo("biLM: no fixture found, using a randomly initialised 'tiny' preset")
    torch.manual_seed(0)
    return BiLM(preset("tiny"))
