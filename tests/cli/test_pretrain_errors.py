"""Everyday mistakes on the pretrain command line end in one line that names the setting and
the fix, not a traceback."""

from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from spacy_elmo.cli import app

REPO = Path(__file__).parents[2]
CONFIG = str(REPO / "project" / "configs" / "pretrain_tiny.cfg")
MICRO = ["--model.char_embedding_dim", "4", "--model.filters", "[[1, 8], [2, 8]]", "--model.lstm_dim", "16", "--model.projection_dim", "8",
         "--system.threads", "1", "--data.batch_size", "2", "--data.unroll_steps", "4", "--training.progress_bar", "false"]  # fmt: skip


@pytest.fixture
def text(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("The cat sat on the mat.\nA dog met the cat.\n" * 5)
    return path


def _error(result, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    (line,) = [line for line in result.output.splitlines() if line.startswith("Error:")]
    return line


@pytest.mark.parametrize(
    "override, expected",
    [
        (
            ["--training.max_steps", "abc"],
            "training.max_steps must be an integer, got 'abc'. Example: --training.max_steps 1000.",
        ),
        (
            ["--training.max_steps"],
            "training.max_steps must be an integer, got True (a command-line flag without a value?)",
        ),
        (["--objective.dropout", "high"], "objective.dropout must be a number, got 'high'"),
        (["--system.mixed_precision", "maybe"], 'system.mixed_precision must be true, false or "auto"'),
    ],
)
def test_a_bad_value_names_the_setting_and_its_type(tmp_path, text, override, expected):
    result = CliRunner().invoke(
        app, ["pretrain", CONFIG, str(tmp_path / "out"), "--paths.train", str(text), *MICRO, *override]
    )
    assert expected in _error(result, code=2)


@pytest.mark.parametrize("option", [["--threads", "1"], ["--max-steps", "5"]])
def test_an_unknown_option_names_itself_and_the_override_form(tmp_path, text, option):
    result = CliRunner().invoke(app, ["pretrain", CONFIG, str(tmp_path / "out"), "--paths.train", str(text), *option])
    line = _error(result, code=2)
    assert f"No such option: {option[0]}" in line and "--section.key value" in line and "--system.threads 1" in line
    assert not (tmp_path / "out").exists()


def test_perplexity_of_a_sentence_instead_of_a_file_names_its_argument(tiny_bilm_dir):
    result = CliRunner().invoke(app, ["perplexity", str(tiny_bilm_dir), "This is a sentence."])
    line = _error(result, code=2)
    assert "TEXT not found: 'This is a sentence.'" in line and "write the sentences to a file" in line


def test_a_checkpoint_of_another_model_size_names_the_way_out(tmp_path, text):
    out = str(tmp_path / "out")

    def pretrain(*options: str):
        return CliRunner().invoke(app, ["pretrain", CONFIG, out, "--paths.train", str(text), *MICRO, *options])

    first = pretrain("--training.max_steps", "2", "--training.eval_every", "2")
    assert first.exit_code == 0, first.output
    line = _error(pretrain("--training.max_steps", "4", "--model.lstm_dim", "24"))
    assert "is a run of another model or vocabulary" in line and "--training.resume false" in line
    assert "new output folder" in line
    again = pretrain("--training.max_steps", "2", "--model.lstm_dim", "24", "--training.resume", "false")
    assert again.exit_code == 0, again.output


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_names_the_setting(tmp_path, text):
    result = CliRunner().invoke(
        app, ["pretrain", CONFIG, str(tmp_path / "out"), "--paths.train", str(text), *MICRO, "--system.device", "cuda"]
    )
    assert "system.device is cuda but torch sees no GPU; use --system.device auto (or cpu, --gpu-id -1)." in _error(
        result
    )


def test_verbose_adds_the_traceback_to_the_error(tmp_path, text):
    args = ["pretrain", str(CONFIG), str(tmp_path / "out"), "--paths.train", str(tmp_path / "missing.txt")]
    quiet = CliRunner().invoke(app, args)
    assert "Text path not found" in _error(quiet)
    verbose = CliRunner().invoke(app, ["--verbose", *args])
    assert verbose.exit_code == 1 and "Traceback (most recent call last)" in verbose.output
    assert "CorpusError: Text path not found" in verbose.output and verbose.output.rstrip().splitlines()[-1].startswith(
        "Error: Text path not found"
    )


@pytest.mark.parametrize("change", ["segments", "text"])
def test_resuming_with_other_text_or_data_settings_names_the_change(tmp_path, text, change):
    """The checkpoint's position in the text means the same only with the same files and
    [data] settings: a changed one is refused, naming it; the same ones resume."""
    out = str(tmp_path / "out")

    def pretrain(*options: str):
        return CliRunner().invoke(app, ["pretrain", CONFIG, out, "--paths.train", str(text), *MICRO, *options])

    first = pretrain("--training.max_steps", "2", "--training.eval_every", "2")
    assert first.exit_code == 0, first.output
    original = text.read_text()
    if change == "segments":
        line = _error(pretrain("--training.max_steps", "4", "--data.segments_per_file", "4"))
        assert "data.segments_per_file 16 -> 4" in line
    else:
        text.write_text(original + "A new line of text.\n")
        line = _error(pretrain("--training.max_steps", "4"))
        assert "paths.train ['text.txt (" in line
        text.write_text(original)
    assert "would skip or repeat text" in line and "--training.resume false" in line
    resumed = pretrain("--training.max_steps", "4", "--training.eval_every", "2")
    assert resumed.exit_code == 0 and "Resuming from" in resumed.output, resumed.output
