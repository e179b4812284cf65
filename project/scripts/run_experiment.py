"""Train and evaluate one pipeline per seed, resumable: a finished seed is never rerun.

    python project/scripts/run_experiment.py NAME CONFIG TEST_DATA OUT_DIR --seeds 0,1,2 -- [spacy train overrides]

For each seed it runs `spacy train CONFIG --output OUT_DIR/NAME/seed-S --system.seed S ...`,
then `spacy evaluate` on TEST_DATA, and writes OUT_DIR/NAME/seed-S/metrics.json with the
test scores, the dev scores of the best model, the training time, the words/s of the
evaluation and the host it ran on (training is deterministic on one CPU model, not across
CPU models). A seed whose metrics.json exists is skipped.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import typer

app = typer.Typer(add_completion=False)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def main(
    ctx: typer.Context,
    name: str,
    config: Path = typer.Argument(..., exists=True, dir_okay=False),
    test_data: Path = typer.Argument(..., exists=True),
    out_dir: Path = typer.Argument(...),
    seeds: str = typer.Option("0,1,2", help="Comma-separated seeds."),
    gpu_id: int = typer.Option(-1),
) -> None:
    overrides: List[str] = list(ctx.args)
    for seed in [int(s) for s in seeds.split(",") if s.strip()]:
        run_dir = out_dir / name / f"seed-{seed}"
        metrics_path = run_dir / "metrics.json"
        if metrics_path.exists():
            typer.echo(f"{name} seed {seed}: done already ({metrics_path})")
            continue
        run_dir.mkdir(parents=True, exist_ok=True)
        started = time.time()
        _run(
            [
                sys.executable,
                "-m",
                "spacy",
                "train",
                str(config),
                "--output",
                str(run_dir),
                "--system.seed",
                str(seed),
                "--gpu-id",
                str(gpu_id),
                *overrides,
            ],
            run_dir / "train.log",
        )
        train_seconds = time.time() - started
        scores_path = run_dir / "test_scores.json"
        _run(
            [
                sys.executable,
                "-m",
                "spacy",
                "evaluate",
                str(run_dir / "model-best"),
                str(test_data),
                "--output",
                str(scores_path),
                "--gpu-id",
                str(gpu_id),
            ],
            run_dir / "evaluate.log",
        )
        best_meta = json.loads((run_dir / "model-best" / "meta.json").read_text())
        metrics = {
            "name": name,
            "seed": seed,
            "config": str(config),
            "test_data": str(test_data),
            "overrides": overrides,
            "train_seconds": round(train_seconds, 1),
            "host": host(),
            "dev": best_meta.get("performance", {}),
            "test": json.loads(scores_path.read_text()),
        }
        metrics_path.write_text(json.dumps(metrics, indent=2) + "\n")
        typer.echo(f"{name} seed {seed}: {json.dumps(metrics['test'])[:200]}")


def host(cpuinfo: Path = Path("/proc/cpuinfo")) -> Dict[str, object]:
    """The CPU as /proc/cpuinfo names it, its core count and whether it multiplies bf16 in hardware."""
    fields: Dict[str, str] = {}
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if not key.strip():
                break  # the first processor's block is enough
            fields[key.strip()] = value.strip()
    flags = set(fields.get("flags", "").split())
    family_model = "/".join(fields.get(key, "?") for key in ("cpu family", "model", "stepping"))
    return {
        "cpu": f"{fields.get('model name', 'unknown')} ({family_model})",
        "cores": os.cpu_count(),
        "amx_bf16": "amx_bf16" in flags,
        "avx512_bf16": "avx512_bf16" in flags,
    }


def _run(command: List[str], log: Path) -> None:
    typer.echo(" ".join(command))
    with log.open("w") as out:
        result = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        tail = log.read_text()[-2000:]
        raise SystemExit(f"command failed (exit {result.returncode}); log {log}:\n{tail}")


if __name__ == "__main__":
    app()
