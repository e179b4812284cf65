"""The project's data scripts: SST/TREC conversion, disjoint subsampling, the report table."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from typer.testing import CliRunner

SCRIPTS = Path(__file__).parents[1] / "project" / "scripts"


def _load(name):
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sst_trees_give_words_and_root_labels(tmp_path):
    convert = _load("convert_textcat")
    trees = tmp_path / "t.txt"
    trees.write_text("(3 (2 (2 The) (2 Rock)) (4 (2 -LRB-) (4 rules)))\n(2 (2 Meh) (2 .))\n(0 (0 Awful))\n")
    assert list(convert.read_sst(trees, binary=False)) == [
        (["The", "Rock", "(", "rules"], "positive"),
        (["Meh", "."], "neutral"),
        (["Awful"], "very_negative"),
    ]
    assert [label for _, label in convert.read_sst(trees, binary=True)] == ["positive", "negative"]
    trees.write_text("not a tree\n")
    with pytest.raises(ValueError, match="t.txt:1: expected a PTB tree"):
        list(convert.read_sst(trees, binary=False))


def test_trec_lines_and_docbin_cats(tmp_path):
    convert = _load("convert_textcat")
    trec = tmp_path / "trec.txt"
    trec.write_bytes("3 Who wrote Hamlet ?\n5 How many caf\xe9s are there ?\n".encode("latin-1"))
    examples = list(convert.read_trec(trec))
    assert examples[1] == (["How", "many", "cafés", "are", "there", "?"], "NUM")
    docs = list(convert.to_docbin(iter(examples), convert.TREC_LABELS).get_docs(spacy.blank("en").vocab))
    assert docs[0].cats["HUM"] == 1.0 and sum(docs[0].cats.values()) == 1.0
    trec.write_text("9 bad label\n")
    with pytest.raises(ValueError, match="LABEL in 0..5"):
        list(convert.read_trec(trec))


def test_subsample_with_rest_is_a_disjoint_split(tmp_path):
    subsample = _load("subsample")
    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=[f"doc{i}"]) for i in range(50)]).to_disk(tmp_path / "all.spacy")
    result = CliRunner().invoke(
        _cli(subsample.main),
        [str(tmp_path / "all.spacy"), str(tmp_path / "dev.spacy"), "--fraction", "0.2", "--rest", str(tmp_path / "train.spacy")],
    )
    assert result.exit_code == 0, result.output
    read = lambda p: [d[0].text for d in DocBin().from_disk(p).get_docs(vocab)]  # noqa: E731
    dev, train = read(tmp_path / "dev.spacy"), read(tmp_path / "train.spacy")
    assert len(dev) == 10 and len(train) == 40
    assert sorted(dev + train) == sorted(f"doc{i}" for i in range(50))


def test_report_averages_seeds(tmp_path):
    report = _load("report")
    for seed, f in [(0, 0.80), (1, 0.90)]:
        run = tmp_path / "ner-elmo-10pct" / f"seed-{seed}"
        run.mkdir(parents=True)
        metrics = {"name": "ner-elmo-10pct", "seed": seed, "train_seconds": 10.0, "test": {"ents_f": f, "speed": 100.0}}
        (run / "metrics.json").write_text(json.dumps(metrics))
    result = CliRunner().invoke(_cli(report.main), [str(tmp_path), str(tmp_path / "out.md")])
    assert result.exit_code == 0, result.output
    table = (tmp_path / "out.md").read_text()
    assert "| ner-elmo-10pct | NER F1 (test) | 85.00 ± 7.07 | 0: 80.00, 1: 90.00 | 10 | 100 |" in table


def _cli(function):
    import typer

    app = typer.Typer()
    app.command()(function)
    return app
