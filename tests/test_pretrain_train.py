"""Pretraining end to end: learning, model folders, resume, divergence, fine-tuning, CLI."""
import json
import math
import os
from collections import Counter
from pathlib import Path

import h5py
import numpy
import pytest
import spacy
import torch
from typer.testing import CliRunner

from spacy_elmo.cli import app
from spacy_elmo.formats.allennlp import load_bilm
from spacy_elmo.model import preset
from spacy_elmo.pretrain import BiLanguageModel, TrainingDiverged, load_model_dir, load_settings, pretrain
from spacy_elmo.pretrain import train as train_module
from spacy_elmo.pretrain.sentences import spacy_sentences

REPO = Path(__file__).parents[1]
CONFIG = REPO / "project" / "configs" / "pretrain_tiny.cfg"
FIXTURES = REPO / "../shared/data/elmo_fixtures"
TRAIN_TEXT = FIXTURES / "bilm-tf" / "train" / "data.txt"
needs_fixtures = pytest.mark.skipif(not TRAIN_TEXT.exists(), reason="../shared/data/elmo_fixtures not available")

# A model far smaller than `tiny`, for tests of the machinery rather than of learning.
MICRO = {
    "model.char_embedding_dim": 4,
    "model.filters": [[1, 8], [2, 8], [3, 16]],
    "model.lstm_dim": 32,
    "model.projection_dim": 16,
    "model.n_highway": 1,
}


def settings(tmp_path, text: Path, **overrides):
    base = {
        "paths.train": str(text),
        "paths.dev": str(text),
        "system.threads": 1,
        "training.progress_bar": False,
        "data.batch_size": 4,
        "data.unroll_steps": 8,
    }
    return load_settings(CONFIG, {**base, **overrides})


def records(output_dir: Path):
    return [json.loads(line) for line in (output_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(
        "The cat sat on the mat. The dog sat on the log.\n"
        "A cat and a dog met on the mat.\n"
        "The log was wet, the mat was dry.\n"
    )
    return path


def unigram_perplexity(path: Path) -> float:
    """Perplexity of the text's own unigram distribution over the predicted tokens (each
    word and </S>), the baseline a language model must beat."""
    sentences = [s for line in spacy_sentences()(path.read_text().splitlines()) for s in line]
    counts = Counter(t for s in sentences for t in [*s, "</S>"])
    total = sum(counts.values())
    return math.exp(-sum(n * math.log(n / total) for n in counts.values()) / total)


@needs_fixtures
def test_tiny_preset_learns_the_bilm_tf_text_and_model_best_works_in_the_pipeline(tmp_path):
    out = tmp_path / "run"
    result = pretrain(
        settings(
            tmp_path,
            TRAIN_TEXT,
            **{"data.batch_size": 16, "data.unroll_steps": 20, "objective.n_negatives": 16, "training.max_steps": 200, "training.eval_every": 100},
        ),
        out,
    )
    # Trained with the sampled softmax (16 negatives of 80 words), evaluated with the full one.
    baseline = unigram_perplexity(TRAIN_TEXT)
    dev = result["dev_perplexity"]
    assert baseline > 30  # about 39 for this text
    assert dev["mean"] < baseline / 10, (dev, baseline)
    assert dev["forward"] < baseline / 5 and dev["backward"] < baseline / 5
    logged = records(out)
    assert [r["step"] for r in logged][-1] == 200 and logged[0]["train_loss"] > logged[-1]["train_loss"]
    assert {"step", "tokens", "train_loss", "dev_perplexity", "tokens_per_second"} <= set(logged[-1])
    for name in ("model-best", "model-last"):
        assert sorted(p.name for p in (out / name).iterdir()) == [
            "config.cfg", "metrics.jsonl", "options.json", "softmax_weights.hdf5", "vocab.txt", "weights.hdf5",
        ]
        # Not the 0600/0700 of temporary files: readable like anything else written under the umask.
        assert (out / name).stat().st_mode & 0o055 == 0o055 & ~_umask()
        assert (out / name / "weights.hdf5").stat().st_mode & 0o044 == 0o044 & ~_umask()
    # The published layout: bilm-tf's dataset names and shapes.
    with h5py.File(out / "model-best" / "weights.hdf5") as f:
        assert f["RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/W_0"].shape == (64 + 64, 4 * 256)
        assert f["CNN_proj/W_proj"].shape == (256, 64)

    # `perplexity` reproduces the last evaluation from model-best (the best was the last one here).
    run = CliRunner().invoke(app, ["perplexity", str(out / "model-best"), str(TRAIN_TEXT), "--output", str(tmp_path / "ppl.json")])
    assert run.exit_code == 0, run.output
    assert json.loads(run.output.strip().splitlines()[-1])["mean"] == pytest.approx(dev["mean"], rel=1e-5)
    assert json.loads((tmp_path / "ppl.json").read_text())["n_tokens"] == dev["n_tokens"]

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"options_file": str(out / "model-best" / "options.json"), "weight_file": str(out / "model-best" / "weights.hdf5")}})
    nlp.initialize()
    doc = nlp("neural networks make use of continuous representations .")
    vectors = doc._.elmo
    assert vectors.shape == (len(doc), 128) and numpy.isfinite(vectors).all() and numpy.abs(vectors).sum() > 0


def test_resumed_run_continues_the_same_loss_curve(tmp_path, text, monkeypatch):
    overrides = {**MICRO, "training.max_steps": 12, "training.eval_every": 5, "training.log_every": 1, "objective.n_negatives": 6}
    straight = tmp_path / "straight"
    pretrain(settings(tmp_path, text, **overrides), straight)

    # Stop a second run at step 8, after the checkpoint of step 5 and two more log lines.
    interrupted = tmp_path / "interrupted"
    real_step = train_module.Trainer.train_step
    calls = {"n": 0}

    def step_then_stop(self):
        calls["n"] += 1
        if calls["n"] == 8:
            raise KeyboardInterrupt
        return real_step(self)

    monkeypatch.setattr(train_module.Trainer, "train_step", step_then_stop)
    with pytest.raises(KeyboardInterrupt):
        pretrain(settings(tmp_path, text, **overrides), interrupted)
    assert [r["step"] for r in records(interrupted)] == list(range(1, 8))
    monkeypatch.setattr(train_module.Trainer, "train_step", real_step)
    pretrain(settings(tmp_path, text, **overrides), interrupted)

    expected, got = records(straight), records(interrupted)
    assert [r["step"] for r in got] == list(range(1, 13))
    for a, b in zip(expected, got):
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-6, abs=1e-7), a["step"]
        assert b["tokens"] == a["tokens"]
    assert got[-1]["dev_perplexity"]["mean"] == pytest.approx(expected[-1]["dev_perplexity"]["mean"], rel=1e-6)

    # resume = false starts afresh: the earlier log and checkpoint are not continued.
    pretrain(settings(tmp_path, text, **{**overrides, "training.max_steps": 2, "training.resume": False}), interrupted)
    assert [r["step"] for r in records(interrupted)] == [1, 2]
    assert torch.load(interrupted / "checkpoint.pt", weights_only=False)["progress"]["step"] == 2


def test_nan_loss_stops_training_and_keeps_the_last_good_checkpoint(tmp_path, text, monkeypatch):
    out = tmp_path / "run"
    real_forward = BiLanguageModel.forward
    calls = {"n": 0}

    def forward_nan_at_step_7(self, *args, **kwargs):
        nll, state = real_forward(self, *args, **kwargs)
        if self.training:
            calls["n"] += 1
            if calls["n"] == 7:
                nll = nll * float("nan")
        return nll, state

    monkeypatch.setattr(BiLanguageModel, "forward", forward_nan_at_step_7)
    with pytest.raises(TrainingDiverged, match=r"loss is nan at step 7.*checkpoint.pt \(step 5\)"):
        pretrain(settings(tmp_path, text, **MICRO, **{"training.max_steps": 20, "training.eval_every": 5}), out)
    checkpoint = torch.load(out / "checkpoint.pt", weights_only=False)
    assert checkpoint["progress"]["step"] == 5
    assert all(torch.isfinite(v).all() for v in checkpoint["model"].values())
    lm, _ = load_model_dir(out / "model-last")
    assert all(torch.isfinite(p).all() for p in lm.parameters())


@needs_fixtures
def test_fine_tuning_starts_from_published_weights_and_softmax(tmp_path, text):
    published = FIXTURES / "allennlp"
    frozen = {"optimizer.lr": 0.0, "training.max_steps": 1, "paths.init_bilm": str(published)}
    first = tmp_path / "first"
    pretrain(settings(tmp_path, text, **frozen), first)
    lm, vocab = load_model_dir(first / "model-last")
    reference = load_bilm(published / "options.json", published / "lm_weights.hdf5")
    assert lm.bilm.config == reference.config
    for (name, got), (_, want) in zip(lm.bilm.state_dict().items(), reference.state_dict().items()):
        assert torch.equal(got, want), name
    assert "cat" in vocab.ids and len(vocab) == lm.softmax.weight.shape[0]

    # A softmax from a file, with its vocabulary.
    second = tmp_path / "second"
    with_softmax = {**frozen, "paths.vocab": str(first / "model-last" / "vocab.txt"), "paths.init_softmax": str(first / "model-last" / "softmax_weights.hdf5")}
    pretrain(settings(tmp_path, text, **with_softmax), second)
    lm2, _ = load_model_dir(second / "model-last")
    assert torch.equal(lm2.softmax.weight, lm.softmax.weight)


def test_cli_reports_bad_input_and_config_errors(tmp_path, text):
    runner = CliRunner()
    missing = runner.invoke(app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(tmp_path / "missing.txt")])
    assert missing.exit_code == 1 and "Text path not found" in missing.output and "missing.txt" in missing.output
    (tmp_path / "data.bin").write_bytes(b"\x00\x00\x00binary")
    binary = runner.invoke(app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(tmp_path / "data.bin")])
    assert binary.exit_code == 1 and "looks binary" in binary.output
    unknown = runner.invoke(app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--training.max_stpes", "3"])
    assert unknown.exit_code == 1 and "Unknown setting(s) in [training]: max_stpes" in unknown.output
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9 cr\u00e8me\n\u00e9t\u00e9\n".encode("latin-1"))
    dev = runner.invoke(app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--paths.dev", str(tmp_path / "latin1.txt")])
    assert dev.exit_code == 1 and "No usable dev text in" in dev.output and "2 line(s) skipped" in dev.output and "2 not UTF-8" in dev.output
    zero = runner.invoke(app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--training.eval_every", "0"])
    assert zero.exit_code == 1 and "training.eval_every must be at least 1, got 0" in zero.output
    mode = runner.invoke(app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--data.mode", "windows"])
    assert mode.exit_code == 1 and "data.mode must be one of" in mode.output


def test_perplexity_cli_names_a_folder_that_is_not_a_model(tmp_path, text):
    run = CliRunner().invoke(app, ["perplexity", str(tmp_path), str(text)])
    assert run.exit_code == 1 and "is not a pretrained biLM folder" in run.output and "options.json" in run.output


@pytest.mark.parametrize("name", ["tiny", "small", "original"])
def test_preset_configs_resolve_to_the_named_sizes_and_bilm_tf_training(name):
    s = load_settings(REPO / "project" / "configs" / f"pretrain_{name}.cfg")
    assert s.model == preset(name)
    optimizer = s.optimizer([torch.nn.Parameter(torch.zeros(1))])
    assert isinstance(optimizer, torch.optim.Adagrad)
    assert optimizer.defaults["lr"] == 0.2 and optimizer.defaults["initial_accumulator_value"] == 1.0
    assert s.training.grad_clip == 10.0 and s.data.mode == "stream" and s.data.unroll_steps == 20


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
