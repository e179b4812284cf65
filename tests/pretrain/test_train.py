"""Pretraining end to end: learning, model folders, resume, divergence, fine-tuning, CLI."""

import json
import math
import os
import signal
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import h5py
import numpy
import pytest
import spacy
import torch
from conftest import SHARED_DATA
from typer.testing import CliRunner

from spacy_elmo.chars import CharacterIds
from spacy_elmo.cli import app
from spacy_elmo.formats.allennlp import load_bilm
from spacy_elmo.model import BiLM, BiLMConfig, preset
from spacy_elmo.pretrain import (
    BiLanguageModel,
    Softmax,
    TrainingDiverged,
    TrainingStopped,
    Vocabulary,
    load_model_dir,
    load_settings,
    pretrain,
    save_model_dir,
)
from spacy_elmo.pretrain import train as train_module
from spacy_elmo.pretrain.config import resolve_settings
from spacy_elmo.pretrain.sentences import spacy_sentences

REPO = Path(__file__).parents[2]
CONFIG = REPO / "project" / "configs" / "pretrain_tiny.cfg"
FIXTURES = SHARED_DATA / "elmo_fixtures"
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


def base_overrides(text: Path):
    return {
        "paths.train": str(text),
        "paths.dev": str(text),
        "system.threads": 1,
        "system.mixed_precision": False,  # the same numbers on every CPU; bf16 has its own tests
        "training.progress_bar": False,
        "data.batch_size": 4,
        "data.unroll_steps": 8,
    }


def settings(tmp_path, text: Path, **overrides):
    return load_settings(CONFIG, {**base_overrides(text), **overrides})


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
            **{
                "data.batch_size": 16,
                "data.unroll_steps": 20,
                "objective.n_negatives": 16,
                "training.max_steps": 200,
                "training.eval_every": 100,
            },
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
    assert logged[-1]["matmul_gflops"] > 0 and logged[-1]["minor_faults_per_step"] >= 0
    for name in ("model-best", "model-last"):
        assert sorted(p.name for p in (out / name).iterdir()) == [
            "config.cfg",
            "metrics.jsonl",
            "options.json",
            "softmax_weights.hdf5",
            "vocab.txt",
            "weights.hdf5",
        ]
        # Not the 0600/0700 of temporary files: readable like anything else written under the umask.
        assert (out / name).stat().st_mode & 0o055 == 0o055 & ~_umask()
        assert (out / name / "weights.hdf5").stat().st_mode & 0o044 == 0o044 & ~_umask()
    # The published layout: bilm-tf's dataset names and shapes.
    with h5py.File(out / "model-best" / "weights.hdf5") as f:
        assert f["RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/W_0"].shape == (64 + 64, 4 * 256)
        assert f["CNN_proj/W_proj"].shape == (256, 64)

    # `perplexity` reproduces the last evaluation from model-best (the best was the last one here).
    run = CliRunner().invoke(
        app, ["perplexity", str(out / "model-best"), str(TRAIN_TEXT), "--output", str(tmp_path / "ppl.json")]
    )
    assert run.exit_code == 0, run.output
    assert json.loads(run.output.strip().splitlines()[-1])["mean"] == pytest.approx(dev["mean"], rel=1e-5)
    assert json.loads((tmp_path / "ppl.json").read_text())["n_tokens"] == dev["n_tokens"]

    nlp = spacy.blank("en")
    nlp.add_pipe(
        "elmo",
        config={
            "model": {
                "options_file": str(out / "model-best" / "options.json"),
                "weight_file": str(out / "model-best" / "weights.hdf5"),
            }
        },
    )
    nlp.initialize()
    doc = nlp("neural networks make use of continuous representations .")
    vectors = doc._.elmo
    assert vectors.shape == (len(doc), 128) and numpy.isfinite(vectors).all() and numpy.abs(vectors).sum() > 0


def test_resumed_run_continues_the_same_loss_curve(tmp_path, text, monkeypatch):
    overrides = {
        **MICRO,
        "training.max_steps": 12,
        "training.eval_every": 5,
        "training.log_every": 1,
        "objective.n_negatives": 6,
    }
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


@pytest.mark.parametrize("minutes,saved_step", [(1e-9, 6), (0, None)])
def test_a_crash_between_evaluations_keeps_the_timed_checkpoint(tmp_path, text, monkeypatch, minutes, saved_step):
    out = tmp_path / "run"
    real_forward = BiLanguageModel.forward
    calls = {"n": 0}

    def forward_crash_at_step_8(self, *args, **kwargs):
        if self.training:
            calls["n"] += 1
            if calls["n"] == 8:
                raise MemoryError("killed")
        return real_forward(self, *args, **kwargs)

    monkeypatch.setattr(BiLanguageModel, "forward", forward_crash_at_step_8)
    overrides = {
        "training.max_steps": 20,
        "training.eval_every": 100,
        "training.log_every": 3,
        "training.checkpoint_minutes": minutes,
    }
    with pytest.raises(MemoryError):
        pretrain(settings(tmp_path, text, **MICRO, **overrides), out)
    assert not (out / "model-last").exists()
    if saved_step is None:
        assert not (out / "checkpoint.pt").exists()
        return
    assert torch.load(out / "checkpoint.pt", weights_only=False)["progress"]["step"] == saved_step
    monkeypatch.setattr(BiLanguageModel, "forward", real_forward)
    pretrain(settings(tmp_path, text, **MICRO, **{**overrides, "training.max_steps": 9}), out)
    assert [r["step"] for r in records(out)] == [3, 6, 9]


def test_a_spent_time_budget_ends_the_run_with_an_evaluation_and_a_model(tmp_path, text):
    out = tmp_path / "run"
    overrides = {
        "training.max_steps": 50,
        "training.eval_every": 100,
        "training.log_every": 10,
        "training.max_minutes": 1e-9,
    }
    pretrain(settings(tmp_path, text, **MICRO, **overrides), out)
    [record] = records(out)
    assert record["step"] == 1 and record["dev_perplexity"]["mean"] > 1
    assert (out / "model-last" / "weights.hdf5").exists()
    [segment] = [json.loads(line) for line in (out / "segments.jsonl").read_text().splitlines()]
    assert segment["end_step"] == 1 and "time budget" in segment["ended"]
    pretrain(settings(tmp_path, text, **MICRO, **overrides), out)  # a resumed run gets the budget anew
    assert [r["step"] for r in records(out)] == [1, 2]


def test_infinite_gradient_norm_stops_training_before_the_step(tmp_path, text, monkeypatch):
    out = tmp_path / "run"
    real_clip = torch.nn.utils.clip_grad_norm_
    calls = {"n": 0}

    def clip_inf_at_step_4(parameters, max_norm, *args, **kwargs):
        norm = real_clip(parameters, max_norm, *args, **kwargs)
        calls["n"] += 1
        return torch.full_like(norm, math.inf) if calls["n"] == 4 else norm

    def no_step_after_step_3(self, *args, **kwargs):
        assert calls["n"] < 4, "the optimizer stepped with an infinite gradient norm"
        return real_adagrad_step(self, *args, **kwargs)

    real_adagrad_step = torch.optim.Adagrad.step
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", clip_inf_at_step_4)
    monkeypatch.setattr(torch.optim.Adagrad, "step", no_step_after_step_3)
    with pytest.raises(
        TrainingDiverged, match=r"the gradient norm is inf at step 4; stopped without saving.*checkpoint.pt \(step 3\)"
    ):
        pretrain(settings(tmp_path, text, **MICRO, **{"training.max_steps": 20, "training.eval_every": 3}), out)
    assert calls["n"] == 4
    assert torch.load(out / "checkpoint.pt", weights_only=False)["progress"]["step"] == 3
    assert [r["step"] for r in records(out)] == [3]


def test_adam_option_trains_and_the_loss_falls(tmp_path, text):
    config = spacy.util.load_config(
        CONFIG,
        overrides={
            **base_overrides(text),
            **MICRO,
            "objective.n_negatives": 0,
            "objective.dropout": 0.0,
            "training.max_steps": 30,
            "training.log_every": 1,
            "training.eval_every": 30,
        },
        interpolate=True,
    )
    config["optimizer"] = {"@misc": "spacy-elmo.Adam.v1", "lr": 0.01, "beta1": 0.8}
    s = resolve_settings(config)
    optimizer = s.optimizer([torch.nn.Parameter(torch.zeros(1))])
    assert isinstance(optimizer, torch.optim.Adam)
    assert (
        optimizer.defaults["lr"] == 0.01
        and optimizer.defaults["betas"] == (0.8, 0.999)
        and optimizer.defaults["eps"] == 1e-8
    )
    out = tmp_path / "run"
    pretrain(s, out)
    state = torch.load(out / "checkpoint.pt", weights_only=False)["optimizer"]
    assert {"exp_avg", "exp_avg_sq"} <= set(state["state"][0]) and state["param_groups"][0]["betas"] == (0.8, 0.999)
    losses = [r["train_loss"] for r in records(out)]
    assert len(losses) == 30
    assert numpy.mean(losses[-5:]) < 0.6 * numpy.mean(losses[:5]), losses  # about 0.4; 1.0 at lr 0


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

    # A softmax from a file, with its vocabulary: one unlike the seeded initial softmax
    # (which the first run exported unchanged, at lr 0), so that ignoring the file shows.
    loaded = Softmax(*lm.softmax.weight.shape)
    with torch.no_grad():
        loaded.weight.copy_(-2.0 * lm.softmax.weight.flip(0))
        loaded.bias.copy_(torch.linspace(-1.0, 1.0, loaded.bias.shape[0]))
    loaded.to_disk(tmp_path / "softmax.hdf5")
    second = tmp_path / "second"
    with_softmax = {
        **frozen,
        "paths.vocab": str(first / "model-last" / "vocab.txt"),
        "paths.init_softmax": str(tmp_path / "softmax.hdf5"),
    }
    pretrain(settings(tmp_path, text, **with_softmax), second)
    lm2, _ = load_model_dir(second / "model-last")
    assert torch.equal(lm2.softmax.weight, loaded.weight) and torch.equal(lm2.softmax.bias, loaded.bias)
    assert not torch.allclose(lm2.softmax.weight, lm.softmax.weight)
    # Its dev perplexity is the loaded softmax's, not the seeded one's.
    first_dev, second_dev = records(first)[-1]["dev_perplexity"], records(second)[-1]["dev_perplexity"]
    assert abs(second_dev["mean"] / first_dev["mean"] - 1) > 0.1
    # The biLM as given is scored before the first step (step 0; at lr 0 the step-1 weights are the same).
    initial = records(second)[0]
    assert (initial["step"], initial["train_loss"]) == (0, None)
    assert initial["dev_perplexity"]["mean"] == pytest.approx(second_dev["mean"], rel=1e-5)


def test_init_softmax_without_a_vocabulary_names_the_fix(tmp_path, text):
    Softmax(10, 16).to_disk(tmp_path / "softmax.hdf5")
    with pytest.raises(
        ValueError, match="paths.init_softmax needs paths.vocab: the vocab.txt whose words are the softmax rows"
    ):
        pretrain(
            settings(tmp_path, text, **MICRO, **{"paths.init_softmax": str(tmp_path / "softmax.hdf5")}),
            tmp_path / "run",
        )


def test_softmax_only_training_keeps_the_given_bilm_and_lowers_perplexity(tmp_path, text, tiny_bilm_dir):
    run = tmp_path / "run"
    overrides = {"paths.init_bilm": str(tiny_bilm_dir), "training.train_bilm": False, "training.max_steps": 30}
    pretrain(settings(tmp_path, text, **{**overrides, "training.eval_every": 30}), run)
    given = load_bilm(tiny_bilm_dir / "options.json", tiny_bilm_dir / "weights.hdf5")
    lm, _ = load_model_dir(run / "model-last")
    for (name, got), (_, want) in zip(lm.bilm.state_dict().items(), given.state_dict().items()):
        assert torch.equal(got, want), name
    initial, last = records(run)[0], records(run)[-1]
    assert initial["step"] == 0 and last["step"] == 30
    assert last["dev_perplexity"]["mean"] < 0.9 * initial["dev_perplexity"]["mean"]


def test_softmax_only_training_without_a_bilm_names_the_fix(tmp_path, text):
    with pytest.raises(
        ValueError, match="training.train_bilm = false trains only the softmax of a given biLM: pass --paths.init_bilm"
    ):
        pretrain(settings(tmp_path, text, **MICRO, **{"training.train_bilm": False}), tmp_path / "run")


def test_cli_reports_bad_input_and_config_errors(tmp_path, text):
    runner = CliRunner()
    missing = runner.invoke(
        app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(tmp_path / "missing.txt")]
    )
    assert missing.exit_code == 1 and "Text path not found" in missing.output and "missing.txt" in missing.output
    (tmp_path / "data.bin").write_bytes(b"\x00\x00\x00binary")
    binary = runner.invoke(
        app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(tmp_path / "data.bin")]
    )
    assert binary.exit_code == 1 and "looks binary" in binary.output
    unknown = runner.invoke(
        app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--training.max_stpes", "3"]
    )
    assert unknown.exit_code == 2 and "Unknown setting(s) in [training]: max_stpes" in unknown.output
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9 cr\u00e8me\n\u00e9t\u00e9\n".encode("latin-1"))
    dev = runner.invoke(
        app,
        [
            "pretrain",
            str(CONFIG),
            str(tmp_path / "out"),
            "--paths.train",
            str(text),
            "--paths.dev",
            str(tmp_path / "latin1.txt"),
        ],
    )
    assert (
        dev.exit_code == 1
        and "No usable dev text in" in dev.output
        and "2 line(s) skipped" in dev.output
        and "2 not UTF-8" in dev.output
    )
    zero = runner.invoke(
        app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--training.eval_every", "0"]
    )
    assert zero.exit_code == 2 and "training.eval_every must be at least 1, got 0" in zero.output
    mode = runner.invoke(
        app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--data.mode", "windows"]
    )
    assert mode.exit_code == 2 and "data.mode must be one of" in mode.output
    unknown_preset = runner.invoke(
        app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--model.preset", "huge"]
    )
    assert (
        unknown_preset.exit_code == 2
        and "Unknown biLM preset 'huge'; choose one of ['medium', 'mid', 'original', 'small', 'tiny']"
        in unknown_preset.output
    )
    bad_size = runner.invoke(
        app, ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(text), "--model.lstm_dim", "0"]
    )
    assert bad_size.exit_code == 2 and "Invalid biLM configuration: lstm_dim must be positive, got 0" in bad_size.output


def test_perplexity_cli_equals_a_hand_computed_perplexity(tmp_path):
    """exp of the mean NLL per target, full softmax, each sentence alone from a zero state:
    forward <S> w_1 .. w_n predicts w_1 .. w_n </S>, backward </S> w_n .. w_1 predicts
    w_n .. w_1 <S>; words outside the vocabulary are <UNK> targets (but keep their characters)."""
    torch.manual_seed(0)
    config = BiLMConfig(**{key.split(".")[1]: value for key, value in MICRO.items()})
    words = ["<S>", "</S>", "<UNK>", "the", "cat", "sat", "on", "mat", "."]
    lm = BiLanguageModel(BiLM(config), len(words), dropout=0.0)
    with torch.no_grad():  # a peaked softmax: a wrong target costs a lot
        lm.softmax.weight.mul_(4.0)
        lm.softmax.bias.uniform_(-1.0, 1.0)
    save_model_dir(lm, Vocabulary(words), tmp_path / "model")
    sentences = [["The", "cat", "sat", "on", "the", "mat", "."], ["A", "dog", "sat", "."]]  # The, A, dog: <UNK>
    text = tmp_path / "text.txt"
    text.write_text("".join(" ".join(s) + "\n" for s in sentences))
    assert [s for line in spacy_sentences()(text.read_text().splitlines()) for s in line] == sentences

    chars = CharacterIds(config.max_characters_per_token)
    weight, bias = lm.softmax.weight.detach().double().numpy(), lm.softmax.bias.detach().double().numpy()
    nll, n_targets = numpy.zeros(2), 0
    bilm = lm.bilm.eval()
    with torch.no_grad():
        for sentence in sentences:
            inputs = [[chars.bos, *map(chars.token, sentence)], [chars.eos, *map(chars.token, reversed(sentence))]]
            targets = [[*sentence, "</S>"], [*reversed(sentence), "<S>"]]
            steps = len(sentence) + 1
            vectors = bilm.char_encoder(
                torch.from_numpy(numpy.stack([row for direction in inputs for row in direction]))
            )
            outputs, _ = bilm.lstm(vectors.view(2, 1, steps, -1), torch.ones(1, steps, dtype=torch.bool))
            top = outputs[-1][:, 0].double().numpy()  # (2, steps, projection_dim)
            # The same hidden states as BiLM.forward's top layer at the words ([forward; backward]).
            exact = bilm(torch.from_numpy(chars.batch([sentence]))).layers[-1, 0].numpy()
            numpy.testing.assert_allclose(top[0, 1:], exact[:, : config.projection_dim], atol=1e-5)
            numpy.testing.assert_allclose(top[1, 1:][::-1], exact[:, config.projection_dim :], atol=1e-5)
            for d in range(2):
                logits = top[d] @ weight.T + bias
                shifted = logits - logits.max(axis=1, keepdims=True)
                log_probs = shifted - numpy.log(numpy.exp(shifted).sum(axis=1, keepdims=True))
                ids = [words.index(t) if t in words else words.index("<UNK>") for t in targets[d]]
                nll[d] -= log_probs[numpy.arange(steps), ids].sum()
            n_targets += steps
    expected = {
        "forward": math.exp(nll[0] / n_targets),
        "backward": math.exp(nll[1] / n_targets),
        "mean": math.exp(nll.sum() / (2 * n_targets)),
    }
    assert n_targets == 13 and expected["forward"] != pytest.approx(expected["backward"], rel=1e-2)

    for batch_size in ("64", "1"):  # both sentences in one padded batch, or one at a time
        run = CliRunner().invoke(app, ["perplexity", str(tmp_path / "model"), str(text), "--batch-size", batch_size])
        assert run.exit_code == 0, run.output
        got = json.loads(run.output.strip().splitlines()[-1])
        assert got["n_tokens"] == n_targets
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, rel=1e-5), (key, batch_size)


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


def test_grad_clip_zero_trains_without_clipping(tmp_path, text):
    """0 means no clipping: the same steps as a limit no gradient reaches, not a frozen model."""
    weights = {}
    for clip in (0.0, 1e12):
        out = tmp_path / f"clip-{clip:g}"
        pretrain(settings(tmp_path, text, **MICRO, **{"training.max_steps": 2, "training.grad_clip": clip}), out)
        weights[clip] = load_model_dir(out / "model-last")[0].state_dict()
    assert weights[0.0].keys() == weights[1e12].keys()
    for name, value in weights[0.0].items():
        torch.testing.assert_close(value, weights[1e12][name], rtol=0, atol=0, msg=name)
    fresh = load_model_dir(tmp_path / "clip-0" / "model-last")[0]
    assert fresh.softmax.bias.abs().sum() > 0  # trained: the softmax bias starts at zero


def test_tokens_per_second_after_a_signal_resume_counts_the_resumed_steps_only(tmp_path, text, monkeypatch):
    """A signal stops the run between log steps; the first rate after the resume divides the
    tokens trained since the resume by the time since the resume (a clock of 1 s per step)."""
    clock = {"now": 0.0}
    fake_time = SimpleNamespace(
        perf_counter=lambda: clock["now"], monotonic=time.monotonic, process_time=time.process_time
    )
    monkeypatch.setattr(train_module, "time", fake_time)
    real_step = train_module.Trainer.train_step
    calls = {"n": 0}

    def timed_step(self):
        calls["n"] += 1
        clock["now"] += 1.0
        if calls["n"] == 6:
            os.kill(os.getpid(), signal.SIGINT)
        return real_step(self)

    monkeypatch.setattr(train_module.Trainer, "train_step", timed_step)
    out = tmp_path / "run"
    overrides = {**MICRO, "training.max_steps": 8, "training.log_every": 4, "training.eval_every": 100}
    with pytest.raises(TrainingStopped):
        pretrain(settings(tmp_path, text, **overrides), out)
    stopped = torch.load(out / "checkpoint.pt", weights_only=False)["progress"]
    assert stopped["step"] == 6 and stopped["tokens_since_log"] > 0
    pretrain(settings(tmp_path, text, **overrides), out)
    by_step = {r["step"]: r for r in records(out)}
    assert sorted(by_step) == [4, 8]
    assert by_step[4]["tokens_per_second"] == pytest.approx(by_step[4]["tokens"] / 4.0)
    assert by_step[8]["tokens_per_second"] == pytest.approx((by_step[8]["tokens"] - stopped["tokens"]) / 2.0)


def test_perplexity_cli_reads_the_text_field_the_model_was_trained_with(tmp_path, text):
    corpus = tmp_path / "text.jsonl"
    corpus.write_text("".join(json.dumps({"body": line}) + "\n" for line in text.read_text().splitlines()))
    out = tmp_path / "run"
    overrides = {**MICRO, "paths.train": str(corpus), "paths.dev": str(corpus), "data.text_field": "body"}
    pretrain(settings(tmp_path, text, **overrides, **{"training.max_steps": 2}), out)
    run = CliRunner().invoke(app, ["perplexity", str(out / "model-last"), str(corpus)])
    assert run.exit_code == 0, run.output
    assert json.loads(run.output.strip().splitlines()[-1])["n_tokens"] > 0
