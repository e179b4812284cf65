"""Two or more pretraining runs side by side, from their metrics.jsonl: dev perplexity at each
evaluation (and its ratio to the first run's), tokens/s, and resident memory after warm-up
against the end of the run.

    python benchmarks/compare_pretrain_runs.py RUN_DIR [RUN_DIR ...] [--warm-up-step 200]

Memory is the `rss_mb` that pretraining logs at each log step (after handing freed heap memory
back to the system); growth = last logged value - value at the warm-up step.

Speed over each run, by quarter of its log steps (medians): tokens/s, CPU seconds per step and,
where logged, the host probe's `matmul_gflops` (the host's speed) and `minor_faults_per_step`
(the process's own work): a run that slows with a steady probe slowed in itself.
"""

import json
from pathlib import Path
from typing import Dict, List

import typer


def read_metrics(run_dir: Path) -> List[Dict]:
    path = run_dir / "metrics.jsonl"
    if not path.exists():
        raise typer.BadParameter(f"{path} does not exist: give the output folder of a pretraining run.")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _median(values: List[float]) -> float:
    return sorted(values)[len(values) // 2]


def speed_by_quarter(rows: List[Dict]) -> List[str]:
    """One line per quarter of the log steps: medians of tokens/s, CPU seconds per step (left
    out after an evaluation, whose CPU time it holds) and, where logged, matmul GFLOP/s and page
    faults per step."""
    logged = [r for r in rows if r.get("tokens_per_second")]
    pairs = [
        (b, (b["cpu_seconds"] - a["cpu_seconds"]) / (b["step"] - a["step"]))
        for a, b in zip(logged, logged[1:])
        if "cpu_seconds" in a and b["step"] > a["step"] and a.get("dev_perplexity") is None
    ]
    lines = []
    for q in range(4):
        part = pairs[q * len(pairs) // 4 : (q + 1) * len(pairs) // 4]
        if not part:
            continue
        line = (
            f"  steps {part[0][0]['step']:>6}-{part[-1][0]['step']:<6} {_median([r['tokens_per_second'] for r, _ in part]):>8,.0f} tokens/s"
            f" {_median([c for _, c in part]):>6.3f} CPU s/step"
        )
        for key, label in (("matmul_gflops", "matmul GFLOP/s"), ("minor_faults_per_step", "faults/step")):
            values = [r[key] for r, _ in part if r.get(key) is not None]
            if values:
                line += f" {_median(values):>8,.0f} {label}"
        lines.append(line)
    return lines


def main(
    run_dirs: List[Path] = typer.Argument(..., help="Output folders of pretraining runs (the first is the reference)."),
    warm_up_step: int = typer.Option(200, help="The step whose rss_mb counts as the memory after warm-up."),
) -> None:
    runs = {str(d): read_metrics(d) for d in run_dirs}
    names = list(runs)
    evaluations = {
        name: {r["step"]: r["dev_perplexity"]["mean"] for r in rows if r.get("dev_perplexity")}
        for name, rows in runs.items()
    }
    steps = sorted(set().union(*(e.keys() for e in evaluations.values())))
    typer.echo("dev perplexity (mean of both directions); in brackets: ratio to the first run")
    width = max(24, *(len(name) + 2 for name in names))
    typer.echo("step      " + "".join(f"{name:>{width}}" for name in names))
    for step in steps:
        reference = evaluations[names[0]].get(step)
        cells = []
        for name in names:
            value = evaluations[name].get(step)
            ratio = f" ({value / reference:.3f})" if value is not None and reference else ""
            cells.append(f"{value:,.1f}{ratio}" if value is not None else "-")
        typer.echo(f"{step:<10}" + "".join(f"{c:>{width}}" for c in cells))
    typer.echo("")
    for name, rows in runs.items():
        logged = [r for r in rows if r.get("rss_mb") is not None]
        warm = next((r for r in logged if r["step"] >= warm_up_step), None)
        last = logged[-1] if logged else None
        rates = [r["tokens_per_second"] for r in rows if r.get("tokens_per_second")]
        line = f"{name}: {rows[-1]['step']} steps, {rows[-1]['tokens']:,} tokens"
        if rates:
            line += f", median {sorted(rates)[len(rates) // 2]:,.0f} tokens/s"
        if warm and last:
            line += (
                f"; RSS {warm['rss_mb']:,.0f} MB at step {warm['step']}, {last['rss_mb']:,.0f} MB at step"
                f" {last['step']} (growth {last['rss_mb'] - warm['rss_mb']:+,.0f} MB), highest logged"
                f" {max(r['rss_mb'] for r in logged):,.0f} MB"
            )
        typer.echo(line)
        for quarter in speed_by_quarter(rows):
            typer.echo(quarter)


if __name__ == "__main__":
    typer.run(main)
