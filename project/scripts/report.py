"""Write the project's report: the biLM (size, pretraining, perplexity), every task run
(mean ± std over seeds, per seed, training time, speed), ELMo against the baseline, the
study's targets as measured, and the layer probes. Also a JSON summary and the
sample-efficiency plot.

    python project/scripts/report.py EXPERIMENTS_DIR project/report/results.md \\
        [--log ner.log ...] [--plot sample_efficiency.png] [--bilm BILM_DIR] [--perplexity p.json ...] \\
        [--earlier-stage metrics.jsonl ...] [--layers layers.json] [--archive project/report] \\
        [--second-host RECORDS_DIR]

Runs are read from EXPERIMENTS_DIR/NAME/seed-S/metrics.json; `--log` adds runs whose folders
are gone from what `spacy project run` printed for them (test score, config and steps only).
`--second-host` adds run records (NAME-seed-S.json) made on another CPU model, compared only
with each other: training is deterministic on one CPU model, not across models.
"""

import json
import math
import os
import re
import shutil
import statistics
from pathlib import Path
from typing import Dict, List, Optional

import typer

# Main metric per task, as spaCy names them. For single-label textcat micro F = accuracy.
MAIN_METRIC = {"ents_f": "NER F1", "cats_micro_f": "accuracy"}
# The study's targets: ELMo minus baseline, in points, per setting.
TARGETS = {"ner-100pct": 2.5, "ner-10pct": 5.0, "sst5": 2.0}
POS_TARGET_LAYER = 1


def _main_metric(test: Dict[str, float]) -> str:
    for key in MAIN_METRIC:
        if key in test:
            return key
    raise ValueError(f"no known metric among {sorted(test)}")


def _mean_std(values: List[float]) -> str:
    """Mean ± sample standard deviation, x100; one value is marked as such."""
    if len(values) == 1:
        return f"{100 * values[0]:.2f} (1 seed)"
    return f"{100 * statistics.mean(values):.2f} ± {100 * statistics.stdev(values):.2f}"


def _standard_error(a: List[float], b: List[float]) -> Optional[float]:
    """Standard error of mean(a) - mean(b) from the seeds' sample variances (None below 2 seeds each)."""
    if len(a) < 2 or len(b) < 2:
        return None
    return math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))


def _override(overrides: List[str], key: str) -> Optional[str]:
    """The value given to KEY in a list of spaCy command-line overrides."""
    for i, arg in enumerate(overrides):
        if arg == key and i + 1 < len(overrides):
            return overrides[i + 1]
        if arg.startswith(key + "="):
            return arg.split("=", 1)[1]
    return None


def run_records(experiments: Path) -> List[Path]:
    """EXPERIMENTS/NAME/seed-S/metrics.json, one per finished run."""
    return sorted(experiments.glob("*/seed-*/metrics.json"))


def log_runs(paths: List[Path]) -> List[Dict]:
    """Run records from the output of `spacy project run` (run_experiment.py's lines): per run
    its `spacy train` and `spacy evaluate` command lines and `NAME seed S: {test scores}`, the
    scores cut after 200 characters. Training time and speed are not in the log (None). For
    single-label text classification the logged cats_micro_p equals cats_micro_f (accuracy)."""
    runs: Dict[tuple, Dict] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            train = re.search(r"-m spacy train (\S+) --output \S*?([^/\s]+)/seed-(\d+)\s", line)
            evaluate = re.search(r"-m spacy evaluate \S*?([^/\s]+)/seed-(\d+)/model-best (\S+)", line)
            scores = re.match(r"^(\S+) seed (\d+): (\{.*)", line)
            if train:
                run = runs.setdefault((train.group(2), int(train.group(3))), {})
                steps = re.search(r"--training\.max_steps (\d+)", line)
                run["config"] = train.group(1)
                run["overrides"] = ["--training.max_steps", steps.group(1)] if steps else []
            elif evaluate:
                runs.setdefault((evaluate.group(1), int(evaluate.group(2))), {})["test_data"] = evaluate.group(3)
            elif scores:
                name, seed, text = scores.group(1), int(scores.group(2)), scores.group(3)
                found = re.search(r'"ents_f": ([0-9.]+)', text) or re.search(r'"cats_micro_p": ([0-9.]+)', text)
                if found is None:
                    raise ValueError(f"{path}: no ents_f or cats_micro_p in the scores of {name} seed {seed}.")
                metric = "ents_f" if '"ents_f"' in found.group(0) else "cats_micro_f"
                run = runs.setdefault((name, seed), {})
                run.update(name=name, seed=seed, train_seconds=None, test={metric: float(found.group(1))})
    return [run for run in runs.values() if "test" in run]


def summarise(runs: List[Dict]) -> Dict[str, Dict]:
    summary: Dict[str, Dict] = {}
    for run in runs:
        entry = summary.setdefault(run["name"], {"metric": _main_metric(run["test"]), "seeds": {}})
        entry["seeds"][run["seed"]] = {
            "test": run["test"][entry["metric"]],
            "train_seconds": run["train_seconds"],
            "words_per_second": run["test"].get("speed"),
        }
        entry["config"] = Path(run.get("config", "?")).name
        entry["steps"] = _override(run.get("overrides", []), "--training.max_steps")
        entry["evaluated_on"] = "/".join(Path(run["test_data"]).parts[-2:]) if "test_data" in run else "-"
        host = run.get("host", {}).get("cpu")
        entry.setdefault("hosts", [])
        if host and host not in entry["hosts"]:
            entry["hosts"].append(host)
    for entry in summary.values():
        entry["mean"] = statistics.mean(s["test"] for s in entry["seeds"].values())
    return summary


def compare_systems(summary: Dict[str, Dict]) -> Dict[str, Dict]:
    """Pair '<task>-baseline[-<setting>]' with '<task>-elmo[-...]', '<task>-elmo-adapted[-...]'
    (the biLM fine-tuned on the task's training text) and '<task>-trf[-...]'."""
    rows: Dict[str, Dict] = {}
    for name, entry in summary.items():
        task, sep, setting = name.partition("-baseline")
        if not sep:
            continue
        row: Dict[str, Optional[float]] = {"baseline": entry["mean"], "n_seeds": len(entry["seeds"])}
        baseline_scores = [s["test"] for s in entry["seeds"].values()]
        for system in ("elmo", "elmo-adapted", "trf"):
            other = summary.get(f"{task}-{system}{setting}")
            key = system.replace("-", "_")
            row[key] = other["mean"] if other else None
            if other and system != "trf":
                row[f"{key}_minus_baseline"] = other["mean"] - entry["mean"]
                row[f"{key}_standard_error"] = _standard_error(
                    [s["test"] for s in other["seeds"].values()], baseline_scores
                )
        rows[f"{task}{setting}"] = row
    return rows


def task_table(summary: Dict[str, Dict]) -> List[str]:
    lines = [
        "| setting | config, steps | evaluated on | metric | mean ± sample std over seeds (x100) | per seed | train time (s, mean) | eval words/s | host |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in summary.items():
        seeds = entry["seeds"]
        per_seed = ", ".join(f"{k}: {100 * v['test']:.2f}" for k, v in sorted(seeds.items()))
        times = [s["train_seconds"] for s in seeds.values() if s["train_seconds"] is not None]
        seconds = f"{statistics.mean(times):.0f}" if times else "-"
        speed = [s["words_per_second"] for s in seeds.values() if s["words_per_second"]]
        speed_text = f"{statistics.mean(speed):.0f}" if speed else "-"
        scores = [s["test"] for s in seeds.values()]
        lines.append(
            f"| {name} | {entry['config']}, {entry['steps'] or 'config'} | {entry['evaluated_on']} | {MAIN_METRIC[entry['metric']]} | {_mean_std(scores)} | {per_seed} | {seconds} | {speed_text} | {'; '.join(entry['hosts']) or 'not recorded'} |"
        )
    return lines


def comparison_table(rows: Dict[str, Dict]) -> List[str]:
    lines = [
        "| setting | baseline | + ELMo | ELMo - baseline | + ELMo, biLM adapted to the task's text | adapted - baseline | MiniLM-L6 (spacy-transformers) |",
        "|---|---|---|---|---|---|---|",
    ]
    points = lambda v: "-" if v is None else f"{100 * v:.2f}"  # noqa: E731
    delta = lambda v: "-" if v is None else f"{100 * v:+.2f}"  # noqa: E731
    for setting, row in rows.items():
        lines.append(
            f"| {setting} | {points(row['baseline'])} | {points(row['elmo'])} | {delta(row.get('elmo_minus_baseline'))} "
            f"| {points(row['elmo_adapted'])} | {delta(row.get('elmo_adapted_minus_baseline'))} | {points(row['trf'])} |"
        )
    return lines


def target_table(rows: Dict[str, Dict], layers: Optional[Dict]) -> List[str]:
    lines = ["| target | measured (± standard error) | met, on the mean |", "|---|---|---|"]
    for setting, points in TARGETS.items():
        row = rows.get(setting, {})
        for system, label in (("elmo", "ELMo"), ("elmo_adapted", "ELMo with the adapted biLM")):
            delta = row.get(f"{system}_minus_baseline")
            if delta is None and system == "elmo_adapted":
                continue
            if delta is None:
                lines.append(f"| {setting}: {label} >= baseline + {points:.1f} | not run | - |")
            else:
                met = "yes" if 100 * delta >= points else "no"
                error = row.get(f"{system}_standard_error")
                # no standard error: the system or its baseline has 1 seed
                measured = f"{100 * delta:+.2f}" + (" (1 seed)" if error is None else f" ± {100 * error:.2f}")
                lines.append(f"| {setting}: {label} >= baseline + {points:.1f} | {measured} | {met} |")
    pos = (layers or {}).get("probes", {}).get("pos")
    if pos is None:
        lines.append(f"| POS probe best on layer {POS_TARGET_LAYER} | not run | - |")
    else:
        accuracies = " / ".join(f"{100 * a:.2f}" for a in pos["accuracy_per_layer"])
        met = "yes" if pos["best_layer"] == POS_TARGET_LAYER else "no"
        lines.append(
            f"| POS probe best on layer {POS_TARGET_LAYER} | layer {pos['best_layer']} ({accuracies}) | {met} |"
        )
    return lines


def bilm_section(bilm: Path, perplexity: List[Path], earlier: List[Path]) -> List[str]:
    from spacy_elmo.formats.allennlp import load_bilm

    weights = bilm / "model-best" / "weights.hdf5"
    model = load_bilm(bilm / "model-best" / "options.json", weights)
    c = model.config
    n_params = sum(p.numel() for p in model.parameters())
    lines = [
        f"- Size: LSTM {c.lstm_dim}, projection {c.projection_dim}, {c.n_layers} layers, "
        f"char CNN {c.n_filters} filters, {c.n_highway} highway; "
        f"{n_params / 1e6:.2f}M parameters, weights.hdf5 {weights.stat().st_size / 1e6:.1f} MB "
        f"(the softmax used only for pretraining not counted).",
    ]
    logs = [*earlier, bilm / "metrics.jsonl"]
    stages = [json.loads(log.read_text().strip().splitlines()[-1]) for log in logs if log.exists()]
    described = [
        f"{last['step']:,} steps, {last['tokens']:,} tokens, "
        f"{last['elapsed_seconds'] / 60:.0f} minutes ({last['tokens'] / last['elapsed_seconds']:,.0f} tokens/s)"
        for last in stages
    ]
    if len(stages) == 1:
        lines.append(f"- Pretraining: {described[0]}.")
    elif stages:
        tokens = sum(last["tokens"] for last in stages)
        minutes = sum(last["elapsed_seconds"] for last in stages) / 60
        lines.append(
            f"- Pretraining in {len(stages)} stages, each from the one before's weights: "
            + "; ".join(f"stage {k}: {text}" for k, text in enumerate(described, 1))
            + f"; {tokens:,} tokens and {minutes:.0f} minutes in all."
        )
    if perplexity:
        lines += ["", "| text | forward | backward | mean | tokens |", "|---|---|---|---|---|"]
        for path in perplexity:
            p = json.loads(path.read_text())
            lines.append(
                f"| {Path(p['text']).name} | {p['forward']:.1f} | {p['backward']:.1f} | {p['mean']:.1f} | {p['n_tokens']:,} |"
            )
    return lines


def layers_section(layers: Dict) -> List[str]:
    lines = ["| probe (token accuracy, x100) | layer 0 | layer 1 | layer 2 | majority |", "|---|---|---|---|---|"]
    for task, probe in layers["probes"].items():
        cells = " | ".join(f"{100 * a:.2f}" for a in probe["accuracy_per_layer"])
        lines.append(f"| {task} | {cells} | {100 * probe['majority_baseline']:.2f} |")
        if "entity_token_accuracy_per_layer" in probe:
            cells = " | ".join(f"{100 * a:.2f}" for a in probe["entity_token_accuracy_per_layer"])
            lines.append(f"| {task}, entity tokens only | {cells} | - |")
    if layers.get("learned_mixes"):
        lines += ["", "| learned mix | layer 0 | layer 1 | layer 2 | gamma |", "|---|---|---|---|---|"]
        for name, mix in layers["learned_mixes"].items():
            cells = " | ".join(f"{w:.3f}" for w in mix["weights"])
            lines.append(f"| {name} | {cells} | {mix['gamma']:.3f} |")
    return lines


def main(
    experiments: Path = typer.Argument(..., exists=True, file_okay=False),
    output: Path = typer.Argument(...),
    log: List[Path] = typer.Option([], help="Output of `spacy project run` for runs whose folders are gone."),
    plot: Optional[Path] = typer.Option(None, help="PNG for the sample-efficiency curve."),
    bilm: Optional[Path] = typer.Option(None, help="The pretraining output folder (model-best, metrics.jsonl)."),
    earlier_stage: List[Path] = typer.Option(
        [],
        exists=True,
        dir_okay=False,
        help="metrics.jsonl of a pretraining run the biLM continued from (oldest first), for the full cost.",
    ),
    perplexity: List[Path] = typer.Option([], help="Perplexity JSON files from `python -m spacy_elmo perplexity`."),
    layers: Optional[Path] = typer.Option(None, help="layers.json from probe_layers.py."),
    archive: Optional[Path] = typer.Option(None, help="Copy the run records here, to commit with the report."),
    second_host: Optional[Path] = typer.Option(
        None, exists=True, file_okay=False, help="Run records (NAME-seed-S.json) of another host, compared apart."
    ),
) -> None:
    records = run_records(experiments)
    runs = [json.loads(path.read_text()) for path in records]
    found = {(run["name"], run["seed"]) for run in runs}
    logged = [run for run in log_runs(log) if (run["name"], run["seed"]) not in found]
    summary = summarise(runs + logged)
    rows = compare_systems(summary)
    layer_data = json.loads(layers.read_text()) if layers is not None and layers.exists() else None
    kept = f", kept in `{os.path.relpath(archive / 'runs', output.parent)}/`" if archive is not None else ""
    sections: List[str] = [
        "# Results",
        "",
        f"Written by `python project/scripts/report.py` from {len(records)} runs "
        f"(one `metrics.json` each{kept})"
        + (f" and {len(logged)} runs known only from their logs (no training time or speed)" if logged else "")
        + "; scores x100 on each setting's evaluation set.",
        "",
    ]
    if bilm is not None:
        sections += ["## The biLM", "", *bilm_section(bilm, perplexity, earlier_stage), ""]
    sections += [
        "## ELMo against the baseline (evaluation set, mean over seeds, x100)",
        "",
        *comparison_table(rows),
        "",
    ]
    if layer_data is not None or any(setting in rows for setting in TARGETS):
        sections += ["## Targets", "", *target_table(rows, layer_data), ""]
    sections += ["## Every setting", "", *task_table(summary), ""]
    other: Dict[str, Dict] = {}
    if second_host is not None:
        other_runs = [json.loads(path.read_text()) for path in sorted(second_host.glob("*-seed-*.json"))]
        other_summary = summarise(other_runs)
        other = {"runs": other_summary, "comparison": compare_systems(other_summary)}
        sections += [
            "## On a second host",
            "",
            f"{len(other_runs)} runs (`{os.path.relpath(second_host, output.parent)}/`), each compared only "
            "with runs of that host; scores x100 on each setting's evaluation set.",
            "",
            *comparison_table(other["comparison"]),
            "",
            *task_table(other["runs"]),
            "",
        ]
    if layer_data is not None:
        sections += ["## Layers: linear probes and learned mixes", "", *layers_section(layer_data), ""]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(sections))
    document: Dict[str, Dict] = {"runs": summary, "comparison": rows}
    if other:
        document["second_host"] = other
    output.with_suffix(".json").write_text(json.dumps(document, indent=2) + "\n")
    typer.echo("\n".join(sections))
    if plot is not None:
        _plot_sample_efficiency(summary, plot)
    if archive is not None:
        archive_records(records, bilm, archive)


def archive_records(records: List[Path], bilm: Optional[Path], archive: Path) -> None:
    """Each run's metrics.json as runs/NAME-seed-S.json; the biLM's pretraining log, options
    and config under pretrain/ (records only: no weights)."""
    (archive / "runs").mkdir(parents=True, exist_ok=True)
    for path in records:
        target = archive / "runs" / f"{path.parent.parent.name}-{path.parent.name}.json"
        shutil.copyfile(path, target)
    if bilm is not None:
        (archive / "pretrain").mkdir(parents=True, exist_ok=True)
        for source in (
            bilm / "metrics.jsonl",
            bilm / "model-best" / "options.json",
            bilm / "model-best" / "config.cfg",
        ):
            if source.exists():
                shutil.copyfile(source, archive / "pretrain" / source.name)


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
            curves.setdefault(system, []).append((int(fraction[:-3]), 100 * entry["mean"]))
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
