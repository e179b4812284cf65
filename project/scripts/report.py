"""Aggregate OUT_DIR/*/seed-*/metrics.json into a markdown table (mean ± std over seeds) and
a JSON summary; plot the sample-efficiency curve where runs at several fractions exist.

    python project/scripts/report.py EXPERIMENTS_DIR project/report.md [--extra metrics.json ...]
"""
import json
import statistics
from pathlib import Path
from typing import Dict, List, Optional

import typer

# Main metric per task, as spaCy names them. For single-label textcat micro F = accuracy.
MAIN_METRIC = {"ents_f": "NER F1 (test)", "cats_micro_f": "accuracy (test)"}


def _main_metric(test: Dict[str, float]) -> str:
    for key in MAIN_METRIC:
        if key in test:
            return key
    raise ValueError(f"no known metric among {sorted(test)}")


def _fmt(values: List[float]) -> str:
    mean = statistics.mean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{100 * mean:.2f} ± {100 * std:.2f}"


def summarise(experiments: Path) -> Dict[str, Dict]:
    summary: Dict[str, Dict] = {}
    for path in sorted(experiments.glob("*/seed-*/metrics.json")):
        run = json.loads(path.read_text())
        entry = summary.setdefault(run["name"], {"metric": _main_metric(run["test"]), "seeds": {}})
        entry["seeds"][run["seed"]] = {
            "test": run["test"][entry["metric"]],
            "train_seconds": run["train_seconds"],
            "words_per_second": run["test"].get("speed"),
        }
    return summary


def main(
    experiments: Path = typer.Argument(..., exists=True, file_okay=False),
    output: Path = typer.Argument(...),
    plot: Optional[Path] = typer.Option(None, help="PNG for the sample-efficiency curve."),
) -> None:
    summary = summarise(experiments)
    lines = [
        "| setting | metric | mean ± std over seeds (x100) | per seed | train time (s, mean) | eval words/s |",
        "|---|---|---|---|---|---|",
    ]
    for name, entry in summary.items():
        seeds = entry["seeds"]
        scores = [s["test"] for s in seeds.values()]
        per_seed = ", ".join(f"{k}: {100 * v['test']:.2f}" for k, v in sorted(seeds.items()))
        seconds = statistics.mean(s["train_seconds"] for s in seeds.values())
        speed = [s["words_per_second"] for s in seeds.values() if s["words_per_second"]]
        speed_text = f"{statistics.mean(speed):.0f}" if speed else "-"
        lines.append(
            f"| {name} | {MAIN_METRIC[entry['metric']]} | {_fmt(scores)} | {per_seed} | {seconds:.0f} | {speed_text} |"
        )
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(lines) + "\n")
    output.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    typer.echo("\n".join(lines))
    if plot is not None:
        _plot_sample_efficiency(summary, plot)


def _plot_sample_efficiency(summary: Dict[str, Dict], plot: Path) -> None:
    """Runs named '<system>-<pct>pct' become one curve per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    curves: Dict[str, List] = {}
    for name, entry in summary.items():
        system, _, fraction = name.rpartition("-")
        if fraction.endswith("pct") and fraction[:-3].isdigit():
            scores = [s["test"] for s in entry["seeds"].values()]
            curves.setdefault(system, []).append((int(fraction[:-3]), 100 * statistics.mean(scores)))
    if not curves:
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for system, points in sorted(curves.items()):
        xs, ys = zip(*sorted(points))
        ax.plot(xs, ys, marker="o", label=system)
    ax.set_xscale("log")
    ax.set_xticks(sorted({x for points in curves.values() for x, _ in points}))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("% of training sentences")
    ax.set_ylabel("test score (x100)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(plot, dpi=120)


if __name__ == "__main__":
    typer.run(main)
