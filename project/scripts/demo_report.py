"""The demo's results: NER with and without ELMo, what the vectors show, the biLM used.

    python project/scripts/demo_report.py DEMO_DIR

Reads DEMO_DIR/experiments/demo-ner-{baseline,elmo}/seed-0/metrics.json, DEMO_DIR/bilm/bilm.json,
DEMO_DIR/senses.json and DEMO_DIR/data/source.json; writes DEMO_DIR/results.json and prints a
short table and one sentence of what it shows.
"""

import json
import time
from pathlib import Path

import typer


def _read(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def main(demo_dir: Path = typer.Argument(..., exists=True, file_okay=False)) -> None:
    source = _read(demo_dir / "data" / "source.json")
    bilm = _read(demo_dir / "bilm" / "bilm.json")
    senses = _read(demo_dir / "senses.json")
    runs = {
        name: _read(demo_dir / "experiments" / f"demo-ner-{name}" / "seed-0" / "metrics.json")
        for name in ("baseline", "elmo")
    }
    scores = {
        name: {k: round(100 * run["test"][k], 2) for k in ("ents_p", "ents_r", "ents_f")} for name, run in runs.items()
    }
    delta = round(scores["elmo"]["ents_f"] - scores["baseline"]["ents_f"], 2)
    results = {
        "metric": f"ents_f: NER F1 (%) on {source['ner_eval_sentences']} evaluation sentences, both trained on the same {source['ner_train_sentences']} sentences for the same steps",
        "baseline": scores["baseline"],
        "elmo": scores["elmo"],
        "delta": delta,
        "bilm": bilm,
        "senses": senses,
        "data": source,
        "train_seconds": {name: run["train_seconds"] for name, run in runs.items()},
        "seconds": round(time.time() - source["started_at"], 1),
    }
    (demo_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    agree = senses["same_sense_neighbour"]
    curve = bilm["pretraining_curve"]
    typer.echo("")
    typer.echo(f"biLM: {bilm['source']} (LSTM {bilm['lstm_dim']}, projection {bilm['projection_dim']})")
    if curve:
        shown = " -> ".join(f"{p['dev_perplexity']:.0f}" for p in curve)
        typer.echo(f"pretraining, dev perplexity at steps {', '.join(str(p['step']) for p in curve)}: {shown}")
    typer.echo(f'"{senses["word"]}" in context ({", ".join(f"{n} {s}" for s, n in senses["occurrences"].items())} sentences): '
               f"nearest other occurrence of the same sense {agree['elmo_top_layer']:.0%} by ELMo vector, "
               f"{agree['char_cnn_layer_0']:.0%} by the context-free char-CNN vector (chance {senses['chance']:.0%})")  # fmt: skip
    if "plot" in senses:
        typer.echo(f"picture: {senses['plot']}")
    typer.echo("")
    typer.echo(f"{'NER':<10} {'P':>7} {'R':>7} {'F1':>7}   train s")
    for name in ("baseline", "elmo"):
        s = scores[name]
        typer.echo(
            f"{name:<10} {s['ents_p']:>7.2f} {s['ents_r']:>7.2f} {s['ents_f']:>7.2f}   {runs[name]['train_seconds']:>7.0f}"
        )
    typer.echo(f"{'delta F1':<10} {'':>7} {'':>7} {delta:>+7.2f}")
    typer.echo("")
    verb = "improve" if delta > 0 else "do not change" if delta == 0 else "lower"
    typer.echo(
        f"Trained on the same {source['ner_train_sentences']} sentences for the same steps, ELMo features {verb} NER F1 by "
        f'{abs(delta):.2f} points here; the ELMo vector of "{senses["word"]}" tells its senses apart '
        f"({agree['elmo_top_layer']:.0%} same-sense neighbours) where a context-free vector cannot ({agree['char_cnn_layer_0']:.0%})."
        + ("" if source["real_data"] else " (Synthetic sample: these figures only show that the demo runs end to end.)")
    )
    typer.echo(f"results: {demo_dir / 'results.json'} ({results['seconds']:.0f} s)")


if __name__ == "__main__":
    typer.run(main)
