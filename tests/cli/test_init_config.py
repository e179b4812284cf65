"""`python -m spacy_elmo init-config`: the reference recipe, configs that `spacy debug config`
accepts and `spacy train` runs without --code, sizes, and errors."""

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.cli.train import train
from spacy.tokens import Doc, DocBin
from typer.testing import CliRunner

from spacy_elmo.cli import app
from spacy_elmo.init_config import init_config, task_components
from spacy_elmo.layers import find_mixes

REPO = Path(__file__).parents[2]
LABELS = {"Peter": "PER", "Anna": "PER", "Paris": "LOC", "Berlin": "LOC", "Google": "ORG"}


def write_corpus(path: Path, n: int, seed: int) -> None:
    """Synthetic sentences with one entity each and a PER / OTHER category."""
    rng, vocab = random.Random(seed), spacy.blank("en").vocab
    docs = []
    for _ in range(n):
        name = rng.choice(sorted(LABELS))
        words = [rng.choice(["Yesterday", "Today", "Then"]), name, rng.choice(["said", "wrote", "sang"]), "hello", "."]
        doc = Doc(vocab, words=words, ents=["O", f"B-{LABELS[name]}", "O", "O", "O"])
        doc.cats = {"PER": float(LABELS[name] == "PER"), "OTHER": float(LABELS[name] != "PER")}
        docs.append(doc)
    DocBin(docs=docs).to_disk(path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    write_corpus(folder / "train.spacy", 20, seed=0)
    write_corpus(folder / "dev.spacy", 6, seed=1)
    return {"paths.train": str(folder / "train.spacy"), "paths.dev": str(folder / "dev.spacy")}


def without_paths(config):
    config = config.copy()
    del config["paths"]
    return config


def test_ner_efficiency_config_is_the_reference_recipe(tiny_bilm_dir):
    generated = init_config(["ner"], tiny_bilm_dir)
    assert generated["paths"]["elmo_options"] == str((tiny_bilm_dir / "options.json").resolve())
    assert generated["paths"]["elmo_weights"] == str((tiny_bilm_dir / "weights.hdf5").resolve())
    reference = spacy.util.load_config(REPO / "project" / "configs" / "ner_elmo.cfg", interpolate=False)
    reference["paths"].update(
        elmo_options=generated["paths"]["elmo_options"], elmo_weights=generated["paths"]["elmo_weights"]
    )
    filled = spacy.util.load_model_from_config(reference, auto_fill=True).config
    assert without_paths(generated) == without_paths(filled)


def test_ner_config_trains_in_process(tiny_bilm_dir, corpus, tmp_path):
    result = CliRunner().invoke(
        app, ["init-config", str(tmp_path / "ner.cfg"), "--pipeline", "ner", "--bilm", str(tiny_bilm_dir)]
    )
    assert result.exit_code == 0, result.output
    config = spacy.util.load_config(tmp_path / "ner.cfg")
    assert config["nlp"]["pipeline"] == ["elmo", "ner"]
    assert config["components"]["ner"]["model"]["tok2vec"]["elmo"]["@architectures"] == "spacy-elmo.ElmoListener.v1"
    train(
        tmp_path / "ner.cfg",
        tmp_path / "out",
        overrides={**corpus, "training.max_steps": 2, "training.eval_frequency": 1},
    )
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.pipe_names == ["elmo", "ner"] and nlp.get_pipe("elmo").listening_components == ["ner"]
    assert set(nlp.get_pipe("ner").labels) == {"PER", "LOC", "ORG"}


def test_ner_and_textcat_config_passes_debug_config_and_spacy_train(tiny_bilm_dir, corpus, tmp_path):
    """Subprocesses without --code: the package registers its functions by entry points."""
    output = tmp_path / "ner_textcat.cfg"
    result = CliRunner().invoke(app, ["init-config", str(output), "-p", "ner,textcat", "--bilm", str(tiny_bilm_dir)])
    assert result.exit_code == 0, result.output
    config = spacy.util.load_config(output)
    assert config["nlp"]["pipeline"] == ["elmo", "ner", "textcat"]
    assert (
        config["training"]["score_weights"]["ents_f"] == 0.5
        and config["training"]["score_weights"]["cats_score"] == 0.5
    )
    paths = [arg for key, value in corpus.items() for arg in (f"--{key}", value)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    spacy_cli = [sys.executable, "-m", "spacy"]
    debug = subprocess.run(
        [*spacy_cli, "debug", "config", str(output), *paths],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=1800,
    )
    assert debug.returncode == 0 and "Config is valid" in debug.stdout, debug.stdout + debug.stderr
    command = [
        *spacy_cli,
        "train",
        str(output),
        "--output",
        str(tmp_path / "out"),
        *paths,
        "--training.max_steps",
        "2",
        "--training.eval_frequency",
        "1",
    ]
    run = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.get_pipe("elmo").listening_components == ["ner", "textcat"]
    assert all(len(find_mixes(nlp.get_pipe(name).model)) == 1 for name in ("ner", "textcat"))


def test_every_component_optimize_and_gpu(tiny_bilm_dir):
    for name in task_components():
        config = init_config([name], tiny_bilm_dir, optimize="accuracy", gpu=True, lang="de")
        tok2vec = config["components"][name]["model"]["tok2vec"]
        assert (
            tok2vec["width"],
            tok2vec["embed"]["width"],
            tok2vec["encode"]["width"],
            tok2vec["encode"]["depth"],
        ) == (256, 256, 256, 8)
        assert (
            config["system"]["gpu_allocator"] == "pytorch"
            and config["components"]["elmo"]["model"]["max_batch_tokens"] == 16384
        )
        assert config["nlp"]["lang"] == "de"
        spacy.util.load_model_from_config(config, auto_fill=False, validate=True)
    assert set(task_components()) >= {"ner", "textcat", "textcat_multilabel", "tagger", "parser"}


def test_init_config_errors(tiny_bilm_dir, tmp_path):
    runner = CliRunner()
    cases = [
        (
            ["--pipeline", "ner,lemmatizer", "--bilm", str(tiny_bilm_dir)],
            2,
            "--pipeline takes distinct task components from ner",
        ),
        (["--pipeline", "ner,ner", "--bilm", str(tiny_bilm_dir)], 2, "distinct"),
        (
            ["--pipeline", "ner", "--bilm", str(tiny_bilm_dir), "--optimize", "speed"],
            2,
            "--optimize must be efficiency or accuracy",
        ),
        (["--pipeline", "ner", "--bilm", str(tmp_path / "missing")], 1, "biLM folder not found"),
        (["--pipeline", "ner", "--bilm", str(tmp_path)], 1, "is not a biLM folder: it has no options.json"),
        (
            ["--pipeline", "ner", "--bilm", str(tiny_bilm_dir), "--lang", "english"],
            2,
            "--lang 'english' is not a language code",
        ),
    ]
    for args, code, message in cases:
        result = runner.invoke(app, ["init-config", str(tmp_path / "config.cfg"), *args])
        assert (result.exit_code, message in result.output) == (code, True), (args, result.output)
    assert not (tmp_path / "config.cfg").exists()


def test_the_written_header_is_the_command_that_reproduces_the_config(tiny_bilm_dir):
    args = ["--pipeline", "textcat", "--bilm", str(tiny_bilm_dir), "--optimize", "accuracy", "--lang", "de"]
    result = CliRunner().invoke(app, ["init-config", "-", *args])
    assert result.exit_code == 0, result.output
    header, body = result.output.split("\n", 1)
    assert header == f"# Written by: python -m spacy_elmo init-config {' '.join(args)}"
    assert spacy.util.load_config_from_str(body, interpolate=False)["nlp"]["lang"] == "de"
