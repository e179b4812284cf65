"""What every command shares: --help says what it reads and writes with an example, and
--gpu-id follows spaCy's convention (-1 the CPU; N >= 0 a clear error without CUDA)."""

import pytest
import torch
from typer.testing import CliRunner

import spacy_elmo.cli.pretrain as pretrain_cli
from spacy_elmo.cli import app
from spacy_elmo.pretrain.distributed import start_processes

COMMANDS = ("pretrain", "perplexity", "embed", "init-config")
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")


def test_app_help_lists_the_commands():
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in COMMANDS:
        assert f"{command} (" in result.output  # in the app's description, with what it does


@pytest.mark.parametrize("command", COMMANDS)
def test_help_says_what_it_reads_and_writes_with_an_example(command):
    result = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"Example: python -m spacy_elmo {command} " in text
    assert "Reads" in text or "reads" in text or "INPUT" in text
    assert "writes" in text or "Write" in text


def test_pretrain_gpu_id_sets_system_device(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(
        pretrain_cli, "pretrain", lambda settings, output_dir: seen.append(settings.system.device) or {}
    )
    config = ["pretrain", "project/configs/pretrain_tiny.cfg", str(tmp_path / "out"), "--paths.train", "t.txt"]
    for extra in ([], ["--gpu-id", "-1"], ["-g", "-1", "--system.device", "cuda"]):
        result = CliRunner().invoke(app, [*config, *extra])
        assert result.exit_code == 0, result.output
    assert seen == ["auto", "cpu", "cpu"]  # the config's value unless --gpu-id is given


@no_cuda
@pytest.mark.parametrize("command", ["pretrain", "perplexity"])
def test_gpu_id_without_cuda_is_a_clear_error(command, tmp_path):
    args = {
        "pretrain": ["project/configs/pretrain_tiny.cfg", str(tmp_path / "out")],
        "perplexity": [str(tmp_path), str(tmp_path)],
    }
    result = CliRunner().invoke(app, [command, *args[command], "--gpu-id", "0"])
    assert result.exit_code == 1 and "--gpu-id 0 asks for a GPU" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


@no_cuda
def test_system_device_values():
    assert start_processes("cpu").device == torch.device("cpu")
    for device, message in (
        ("gpu", "must be auto, cpu, cuda or cuda:N"),
        ("cuda:x", "cuda:N"),
        ("cuda:0", "sees no GPU"),
    ):
        with pytest.raises(ValueError, match=message):
            start_processes(device)
