"""The demo's biLM, and a pretraining run whose perplexity falls, from the project's own CLI.

    python project/scripts/demo_bilm.py DEMO_DATA OUT_DIR --committed project/report/bilm --steps 1000

With a committed biLM (options.json + weights.hdf5 in --committed) the demo uses it, copied
to OUT_DIR/model-best, and runs a short pretraining (--showcase-steps) only to show the
perplexity falling. Without one, it pretrains the `tiny` preset on DEMO_DATA/lm.train.txt
for --steps updates and uses that run's model-best. Writes OUT_DIR/bilm.json: which biLM,
its size, and the pretraining run's dev perplexity at each evaluation.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import typer

from spacy_elmo.formats import OPTIONS, find_weights, read_options

REPO = Path(__file__).parents[2]
CONFIG = REPO / "project" / "configs" / "pretrain_tiny.cfg"


def pretrain(data: Path, out: Path, steps: int, batch_size: int, threads: int) -> List[Dict]:
    """Run `python -m spacy_elmo pretrain` and return its evaluations (step, tokens, perplexity)."""
    command = [
        sys.executable, "-m", "spacy_elmo", "pretrain", str(CONFIG), str(out),
        "--paths.train", str(data / "lm.train.txt"), "--paths.dev", str(data / "lm.dev.txt"),
        "--training.max_steps", str(steps), "--training.eval_every", str(max(1, steps // 4)),
        "--data.batch_size", str(batch_size), "--system.threads", str(threads), "--training.progress_bar", "false",
    ]  # fmt: skip
    typer.echo(" ".join(command))
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"pretraining failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    curve = [
        {
            "step": r["step"],
            "tokens": r["tokens"],
            "dev_perplexity": round(r["dev_perplexity"]["mean"], 1),
            "seconds": round(r["elapsed_seconds"], 1),
        }
        for r in records
        if r.get("dev_perplexity")
    ]
    for point in curve:
        typer.echo(
            f"  step {point['step']:>5}  {point['tokens']:>9,} tokens  dev perplexity {point['dev_perplexity']:>8.1f}"
        )
    return curve


def main(
    data: Path = typer.Argument(..., exists=True, file_okay=False, help="The demo data folder (demo_data.py)."),
    out_dir: Path = typer.Argument(..., help="Where the demo's biLM goes (OUT_DIR/model-best)."),
    committed: Path = typer.Option(
        REPO / "project" / "report" / "bilm", help="The study's biLM folder, used when present."
    ),
    steps: int = typer.Option(1000, help="Pretraining updates when there is no committed biLM."),
    showcase_steps: int = typer.Option(
        400, help="Pretraining updates of the perplexity showcase next to a committed biLM."
    ),
    batch_size: int = typer.Option(
        32, help="Rows per update (32: four times the updates per token of 128, a lower perplexity in a short run)."
    ),
    threads: int = typer.Option(2),
) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    model_dir = out_dir / "model-best"
    if (committed / OPTIONS).is_file():
        weights = find_weights(committed)
        if model_dir.exists():
            shutil.rmtree(model_dir)
        model_dir.mkdir(parents=True)
        shutil.copy(committed / OPTIONS, model_dir / OPTIONS)
        shutil.copy(weights, model_dir / "weights.hdf5")
        source = f"the study's biLM ({committed})"
        typer.echo(f"Using {source}; a {showcase_steps}-step pretraining run shows the perplexity falling:")
        curve = pretrain(data, out_dir / "showcase", showcase_steps, batch_size, threads)
    else:
        source = f"pretrained in this demo ({steps} updates of the tiny preset on {data / 'lm.train.txt'})"
        typer.echo(f"No committed biLM at {committed}: pretraining one ({steps} updates):")
        curve = pretrain(data, out_dir, steps, batch_size, threads)
    config = read_options(model_dir / OPTIONS)
    info = {
        "source": source,
        "path": str(model_dir),
        "lstm_dim": config.lstm_dim,
        "projection_dim": config.projection_dim,
        "pretraining_curve": curve,
    }
    (out_dir / "bilm.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    typer.run(main)
