"""What ELMo vectors are: one word's occurrences, its nearest neighbours by ELMo vector and by
the context-free char-CNN layer, and a 2-D picture coloured by sense.

    python project/scripts/demo_senses.py BILM_DIR SENTENCES_JSON OUT_JSON --plot OUT_PNG

SENTENCES_JSON (written by demo_data.py): {"word": "play", "senses": {"sport": [...], "stage": [...]}}
with tokenised sentences that contain the word, labelled by the cue words around it. For each
occurrence the script finds its nearest other occurrence (cosine similarity) by the top ELMo
layer and by layer 0 (the char CNN: the same vector for every occurrence of a word, so its
neighbours are ties and its sense agreement is chance), and reports how often the neighbour
has the same sense.
"""

import json
from pathlib import Path
from typing import Dict, List, Optional

import numpy
import spacy
import typer
from spacy.tokens import Doc

from spacy_elmo.formats import find_weights


def occurrence_vectors(bilm_dir: Path, word: str, sentences: List[List[str]]) -> numpy.ndarray:
    """(layers, occurrences, dim): each sentence's first occurrence of ``word``, every layer."""
    nlp = spacy.blank("en")
    model = {"options_file": str(bilm_dir / "options.json"), "weight_file": str(find_weights(bilm_dir))}
    nlp.add_pipe("elmo", config={"model": model})
    nlp.initialize()
    docs = [Doc(nlp.vocab, words=words) for words in sentences]
    vectors = []
    for doc in nlp.pipe(docs, batch_size=64):
        i = next(t.i for t in doc if t.lower_ == word)
        vectors.append(doc._.elmo_layers[:, i])
    return numpy.stack(vectors, axis=1)


def nearest_neighbour_agreement(vectors: numpy.ndarray, labels: numpy.ndarray) -> float:
    """Share of occurrences whose most similar other occurrence (cosine) has the same label;
    ties (equal vectors) count as the average label agreement over the tied ones."""
    unit = vectors / numpy.maximum(numpy.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit @ unit.T
    numpy.fill_diagonal(similarity, -numpy.inf)
    agreement = []
    for i, row in enumerate(similarity):
        best = numpy.flatnonzero(row >= row.max() - 1e-6)
        agreement.append(float((labels[best] == labels[i]).mean()))
    return float(numpy.mean(agreement))


def chance_agreement(labels: numpy.ndarray) -> float:
    """Share of same-label pairs among all pairs of distinct occurrences: a random neighbour's."""
    n = len(labels)
    counts = numpy.unique(labels, return_counts=True)[1]
    return float((counts * (counts - 1)).sum() / (n * (n - 1)))


def examples(vectors: numpy.ndarray, sentences: List[List[str]], labels: List[str], n: int = 2) -> List[Dict]:
    """For the first occurrence of each of ``n`` senses: its sentence and its nearest neighbour's."""
    unit = vectors / numpy.maximum(numpy.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit @ unit.T
    numpy.fill_diagonal(similarity, -numpy.inf)
    shown, out = set(), []
    for i, label in enumerate(labels):
        if label in shown or len(shown) == n:
            continue
        shown.add(label)
        j = int(similarity[i].argmax())
        out.append(
            {
                "sense": label,
                "sentence": " ".join(sentences[i]),
                "neighbour_sense": labels[j],
                "neighbour": " ".join(sentences[j]),
            }
        )
    return out


def plot(points: Dict[str, numpy.ndarray], labels: List[str], word: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    senses = sorted(set(labels))
    fig, axes = plt.subplots(1, len(points), figsize=(5 * len(points), 4.2))
    for ax, (title, vectors) in zip(numpy.atleast_1d(axes), points.items()):
        centred = vectors - vectors.mean(axis=0)
        _, _, components = numpy.linalg.svd(centred, full_matrices=False)
        xy = centred @ components[:2].T
        for sense, marker in zip(senses, "os^"):
            chosen = numpy.array([label == sense for label in labels])
            ax.scatter(xy[chosen, 0], xy[chosen, 1], s=18, alpha=0.7, marker=marker, label=sense)
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
    numpy.atleast_1d(axes)[0].legend(title=f'"{word}"')
    fig.suptitle(f'Occurrences of "{word}", 2-D projection (PCA), coloured by sense')
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(
    bilm_dir: Path = typer.Argument(..., exists=True, file_okay=False),
    sentences_json: Path = typer.Argument(..., exists=True, dir_okay=False),
    out_json: Path = typer.Argument(...),
    plot_path: Optional[Path] = typer.Option(
        None, "--plot", help="PNG of the 2-D projection, layer 0 beside the top layer."
    ),
) -> None:
    data = json.loads(sentences_json.read_text(encoding="utf-8"))
    word = data["word"]
    sentences = [s for sense in sorted(data["senses"]) for s in data["senses"][sense]]
    labels = [sense for sense in sorted(data["senses"]) for _ in data["senses"][sense]]
    vectors = occurrence_vectors(bilm_dir, word, sentences)
    label_array = numpy.array(labels)
    result = {
        "word": word,
        "occurrences": {sense: len(data["senses"][sense]) for sense in sorted(data["senses"])},
        "same_sense_neighbour": {
            "char_cnn_layer_0": nearest_neighbour_agreement(vectors[0], label_array),
            "elmo_top_layer": nearest_neighbour_agreement(vectors[-1], label_array),
        },
        "chance": chance_agreement(label_array),
        "examples": examples(vectors[-1], sentences, labels),
    }
    if plot_path is not None:
        plot({"char CNN (layer 0): one point": vectors[0], "ELMo (top layer)": vectors[-1]}, labels, word, plot_path)
        result["plot"] = str(plot_path)
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    agree = result["same_sense_neighbour"]
    typer.echo(
        f'"{word}": the nearest other occurrence has the same sense for {agree["elmo_top_layer"]:.0%} of occurrences by ELMo '
        f"vector, {agree['char_cnn_layer_0']:.0%} by the context-free char-CNN vector (chance {result['chance']:.0%})"
    )


if __name__ == "__main__":
    typer.run(main)
