"""Per-layer linear probes: how much POS and NER information each biLM layer holds, and the
layer mixes that trained pipelines learned.

    python project/scripts/probe_layers.py MODEL_DIR TRAIN_CONLL EVAL_CONLL OUT.json \
        [--plot OUT.png] [--pipeline NAME=PATH ...]

For each layer (0 = char CNN, 1..L = LSTM layers) a softmax classifier is trained on frozen
features of TRAIN_CONLL's tokens (POS column; NER entity type without B-/I-) and scored by
token accuracy on EVAL_CONLL. --pipeline reads the learned ELMo mix of each trained pipeline.
"""

import json
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import numpy
import torch
import typer

from spacy_elmo.embed import layer_features as bilm_layer_features
from spacy_elmo.formats import load_bilm_dir
from spacy_elmo.model import FastBiLM

sys.path.insert(0, str(Path(__file__).parent))
from convert_conll import iob1_to_iob2, read_conll2003_columns  # noqa: E402

TASKS = ("pos", "ner")


def layer_features(model_dir: Path, sentences: List[List[str]]) -> numpy.ndarray:
    """(n_layers, n_tokens, dim) features of every token, sentence by sentence in <S> </S>
    (what `python -m spacy_elmo embed --all` writes per sentence)."""
    bilm = FastBiLM(load_bilm_dir(model_dir).eval())
    by_index = dict(bilm_layer_features(bilm, sentences))
    return numpy.concatenate([by_index[i] for i in range(len(sentences))], axis=1)


def read_probe_data(path: Path, limit: int) -> Tuple[List[List[str]], Dict[str, List[str]]]:
    sentences, labels = [], {task: [] for task in TASKS}
    for rows in read_conll2003_columns(path, limit):
        sentences.append([r[0] for r in rows])
        labels["pos"].extend(r[1] for r in rows)
        labels["ner"].extend(tag.split("-")[-1] for tag in iob1_to_iob2([r[3] for r in rows]))
    return sentences, labels


def probe_predictions(
    train_x: numpy.ndarray,
    train_y: numpy.ndarray,
    eval_x: numpy.ndarray,
    n_classes: int,
    epochs: int = 200,
    seed: int = 0,
) -> numpy.ndarray:
    """Predictions of a full-batch-trained softmax classifier (features standardised)."""
    torch.manual_seed(seed)
    mean, std = train_x.mean(0), train_x.std(0) + 1e-6
    x = torch.from_numpy((train_x - mean) / std)
    y = torch.from_numpy(train_y)
    probe = torch.nn.Linear(x.shape[1], n_classes)
    optimizer = torch.optim.Adam(probe.parameters(), lr=0.05, weight_decay=1e-5)
    for _ in range(epochs):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(probe(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        return probe(torch.from_numpy((eval_x - mean) / std)).argmax(-1).numpy()


def learned_mixes(pipelines: List[str]) -> Dict[str, Dict]:
    import spacy

    from spacy_elmo.layers.mix import find_mixes, learned_mix

    mixes = {}
    for entry in pipelines:
        name, _, path = entry.partition("=")
        nlp = spacy.load(path)
        for component in nlp.pipe_names:
            model = getattr(nlp.get_pipe(component), "model", None)
            for i, mix in enumerate(find_mixes(model) if model is not None else []):
                weights, gamma = learned_mix(mix)
                mixes[f"{name}/{component}" + (f"#{i}" if i else "")] = {"weights": weights.tolist(), "gamma": gamma}
    return mixes


def main(
    model_dir: Path = typer.Argument(..., exists=True, file_okay=False),
    train_conll: Path = typer.Argument(..., exists=True, dir_okay=False),
    eval_conll: Path = typer.Argument(..., exists=True, dir_okay=False),
    output: Path = typer.Argument(...),
    train_sentences: int = typer.Option(3000),
    eval_sentences: int = typer.Option(1000),
    plot: Path = typer.Option(None),
    pipeline: List[str] = typer.Option([], help="NAME=PATH of a trained pipeline whose ELMo mix to report."),
) -> None:
    train_sents, train_labels = read_probe_data(train_conll, train_sentences)
    eval_sents, eval_labels = read_probe_data(eval_conll, eval_sentences)
    train_x, eval_x = layer_features(model_dir, train_sents), layer_features(model_dir, eval_sents)
    result: Dict = {
        "model": str(model_dir),
        "train_tokens": train_x.shape[1],
        "eval_tokens": eval_x.shape[1],
        "probes": {},
    }
    for task in TASKS:
        classes = sorted(set(train_labels[task]))
        index = {c: i for i, c in enumerate(classes)}
        train_y = numpy.array([index[c] for c in train_labels[task]])
        eval_y = numpy.array([index.get(c, -1) for c in eval_labels[task]])
        majority = float((eval_y == numpy.bincount(train_y).argmax()).mean())
        predictions = [probe_predictions(train_x[k], train_y, eval_x[k], len(classes)) for k in range(train_x.shape[0])]
        accuracies = [float((p == eval_y).mean()) for p in predictions]
        result["probes"][task] = {
            "accuracy_per_layer": accuracies,
            "majority_baseline": majority,
            "best_layer": int(numpy.argmax(accuracies)),
        }
        if task == "ner":  # most tokens are O: also score the entity tokens alone
            entity = eval_y != index["O"]
            result["probes"][task]["entity_token_accuracy_per_layer"] = [
                float((p[entity] == eval_y[entity]).mean()) for p in predictions
            ]
        typer.echo(f"{task}: {json.dumps(result['probes'][task])}")
    if pipeline:
        result["learned_mixes"] = learned_mixes(pipeline)
        for name, mix in result["learned_mixes"].items():
            typer.echo(f"mix {name}: weights {[round(w, 4) for w in mix['weights']]}, gamma {mix['gamma']:.4f}")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result, indent=2) + "\n")
    if plot is not None:
        _plot(result, plot)


def _plot(result: Dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if "learned_mixes" in result else 1
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 3.5), squeeze=False)
    ax = axes[0][0]
    for task, probe in result["probes"].items():
        accuracies = probe["accuracy_per_layer"]
        ax.plot(range(len(accuracies)), [100 * a for a in accuracies], marker="o", label=task.upper())
    ax.set_xlabel("biLM layer")
    ax.set_ylabel("probe accuracy (%)")
    ax.set_xticks(range(len(accuracies)))
    ax.legend()
    if panels == 2:
        ax = axes[0][1]
        names = list(result["learned_mixes"])
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            weights = result["learned_mixes"][name]["weights"]
            ax.bar(numpy.arange(len(weights)) + i * width, weights, width, label=name)
        ax.set_xticks(numpy.arange(len(weights)) + width * (len(names) - 1) / 2, [str(k) for k in range(len(weights))])
        ax.set_xlabel("biLM layer")
        ax.set_ylabel("softmax mix weight")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    typer.run(main)
