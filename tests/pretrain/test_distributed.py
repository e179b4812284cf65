"""torchrun with 2 gloo processes trains exactly like 1 process with the same global batch,
resumes where it stopped, and refuses a checkpoint of another number of processes."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
import torch

from spacy_elmo.pretrain import load_model_dir, load_settings, pretrain

REPO = Path(__file__).parents[2]
CONFIG = REPO / "project" / "configs" / "pretrain_tiny.cfg"
# Summation order differs between 1 and 2 processes, so weights agree to float32 rounding.
WEIGHT_TOLERANCE = 1e-5
LOSS_TOLERANCE = 1e-5
TEXT = (
    "The cat sat on the mat. The dog sat on the log.\n"
    "A cat and a dog met on the mat.\nThe log was wet, the mat was dry.\n"
    "Dogs and cats, mats and logs.\nNo cat sat on the dog.\n"
)

OVERRIDES = {
    "model.char_embedding_dim": 4,
    "model.filters": [[1, 8], [2, 8], [3, 16]],
    "model.lstm_dim": 32,
    "model.projection_dim": 16,
    "model.n_highway": 1,
    "system.threads": 1,
    "system.mixed_precision": False,  # the 1e-5 agreement is fp32's: bf16 rounds by batch shape
    "objective.dropout": 0.0,
    "objective.n_negatives": 8,
    "data.batch_size": 4,
    "data.unroll_steps": 6,
    "training.max_steps": 6,
    "training.eval_every": 3,
    "training.log_every": 1,
    "training.progress_bar": False,
}


@pytest.fixture(scope="module")
def text(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("text") / "text.txt"
    path.write_text(TEXT)
    return path


def overrides(text: Path, mode: str = "stream", max_steps: int = 6) -> Dict[str, Any]:
    return {
        **OVERRIDES,
        "paths.train": str(text),
        "paths.dev": str(text),
        "data.mode": mode,
        "training.max_steps": max_steps,
    }


def torchrun(output_dir: Path, settings: Dict[str, Any]) -> subprocess.CompletedProcess:
    """`pretrain` under torchrun with 2 gloo processes."""
    args = [
        a
        for key, value in settings.items()
        for a in (f"--{key}", value if isinstance(value, str) else json.dumps(value))
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "spacy_elmo",
        "pretrain",
        str(CONFIG),
        str(output_dir),
        *args,
    ]
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


@pytest.fixture(scope="module")
def two_process_run(tmp_path_factory, text) -> Callable[[str, int], Path]:
    """The output folder of a 2-process run (data mode, max_steps), each run once per module;
    copy it before changing it."""
    runs: Dict[tuple, Path] = {}

    def get(mode: str, max_steps: int) -> Path:
        if (mode, max_steps) not in runs:
            out = tmp_path_factory.mktemp(f"two-{mode}-{max_steps}") / "run"
            torchrun(out, overrides(text, mode, max_steps))
            runs[(mode, max_steps)] = out
        return runs[(mode, max_steps)]

    return get


def records(output_dir: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in (output_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("mode", ["stream", "sentences"])
def test_two_gloo_processes_match_one_process(tmp_path, text, two_process_run, mode):
    two = two_process_run(mode, 6)
    one = tmp_path / "one"
    pretrain(load_settings(CONFIG, overrides(text, mode)), one)

    logs = [records(out) for out in (one, two)]
    assert [r["step"] for r in logs[1]] == list(range(1, 7))
    for a, b in zip(*logs):
        assert b["tokens"] == a["tokens"]
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=LOSS_TOLERANCE)
    assert logs[1][-1]["dev_perplexity"]["mean"] == pytest.approx(
        logs[0][-1]["dev_perplexity"]["mean"], rel=LOSS_TOLERANCE
    )
    (lm1, _), (lm2, _) = load_model_dir(one / "model-last"), load_model_dir(two / "model-last")
    for (name, p1), (_, p2) in zip(lm1.named_parameters(), lm2.named_parameters()):
        assert torch.allclose(p1, p2, atol=WEIGHT_TOLERANCE), (name, (p1 - p2).abs().max())
    # The weights moved between the evaluations at steps 3 and 6, far more than the tolerance.
    moved = abs(logs[0][5]["dev_perplexity"]["mean"] / logs[0][2]["dev_perplexity"]["mean"] - 1)
    assert moved > 100 * LOSS_TOLERANCE


def test_two_process_run_resumed_from_its_checkpoint_continues_the_straight_run(tmp_path, text, two_process_run):
    """Stopped at step 3 (max_steps 3), resumed to 6: the same log, evaluation and weights as
    a straight run to 6 (per-process data positions, LSTM states, sampler and RNG restored)."""
    resumed = tmp_path / "resumed"
    shutil.copytree(two_process_run("stream", 3), resumed)
    checkpoint = torch.load(resumed / "checkpoint.pt", weights_only=False)
    assert checkpoint["progress"]["step"] == 3 and checkpoint["world_size"] == 2
    run = torchrun(resumed, overrides(text, "stream", 6))
    assert "Resuming from" in run.stderr and "at step 3" in run.stderr

    straight = two_process_run("stream", 6)
    expected, got = records(straight), records(resumed)
    assert [r["step"] for r in got] == list(range(1, 7))
    for a, b in zip(expected, got):
        assert b["tokens"] == a["tokens"]
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-6, abs=1e-7), a["step"]
    assert got[-1]["dev_perplexity"]["mean"] == pytest.approx(expected[-1]["dev_perplexity"]["mean"], rel=1e-6)
    (lm1, _), (lm2, _) = load_model_dir(straight / "model-last"), load_model_dir(resumed / "model-last")
    for (name, p1), (_, p2) in zip(lm1.named_parameters(), lm2.named_parameters()):
        assert torch.allclose(p1, p2, atol=1e-6, rtol=0), (name, (p1 - p2).abs().max())


def test_resuming_with_another_number_of_processes_is_refused(tmp_path, text, two_process_run):
    out = tmp_path / "run"
    shutil.copytree(two_process_run("stream", 3), out)
    with pytest.raises(
        ValueError,
        match=r"checkpoint.pt was written by 2 process\(es\), this run has 1: resume with the same number of processes, or start afresh with --training.resume false",
    ):
        pretrain(load_settings(CONFIG, overrides(text, "stream", 6)), out)
    assert [r["step"] for r in records(out)] == [1, 2, 3], "the refused resume changed the log"
    assert torch.load(out / "checkpoint.pt", weights_only=False)["world_size"] == 2
    # The advice works: starting afresh in one process.
    pretrain(load_settings(CONFIG, {**overrides(text, "stream", 1), "training.resume": False}), out)
    assert [r["step"] for r in records(out)] == [1]
