"""SIGTERM/SIGINT stop pretraining after the current step with a checkpoint of that step;
rerunning the same command resumes there."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).parents[2]
CONFIG = REPO / "project" / "configs" / "pretrain_tiny.cfg"
MICRO = [
    "--model.char_embedding_dim", "4", "--model.filters", "[[1, 8], [2, 8]]", "--model.lstm_dim", "16",
    "--model.projection_dim", "8", "--model.n_highway", "1", "--system.threads", "1", "--system.mixed_precision", "false",
    "--data.batch_size", "2", "--data.unroll_steps", "4", "--training.log_every", "1", "--training.eval_every", "1000",
    "--training.progress_bar", "false",
]  # fmt: skip


def _command(text: Path, out: Path, max_steps: int):
    return [sys.executable, "-m", "spacy_elmo", "pretrain", str(CONFIG), str(out), "--paths.train", str(text),
            "--training.max_steps", str(max_steps), *MICRO]  # fmt: skip


def _steps_logged(out: Path) -> int:
    metrics = out / "metrics.jsonl"
    return len(metrics.read_text().splitlines()) if metrics.exists() else 0


def test_sigterm_writes_a_checkpoint_of_the_current_step_and_the_rerun_resumes(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("The cat sat on the mat.\nA dog met the cat on the log.\n" * 20)
    out = tmp_path / "out"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(_command(text, out, 1_000_000), cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while _steps_logged(out) < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=1800)
    assert process.returncode == 128 + signal.SIGTERM, stderr[-2000:]
    checkpoint = torch.load(out / "checkpoint.pt", weights_only=False)
    step = checkpoint["progress"]["step"]
    assert step >= 3 and f"Stopped at step {step}; checkpoint kept; rerun the same command to resume." in stderr
    assert "Traceback" not in stderr
    assert [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()] == list(
        range(1, step + 1)
    )
    (segment,) = [json.loads(line) for line in (out / "segments.jsonl").read_text().splitlines()]
    assert (segment["start_step"], segment["end_step"], segment["ended"]) == (0, step, "stopped by SIGTERM")

    rerun = subprocess.run(
        _command(text, out, step + 2), cwd=REPO, env=env, capture_output=True, text=True, timeout=1800
    )
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert f"at step {step}" in rerun.stderr and "Resuming" in rerun.stderr
    assert [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()] == list(
        range(1, step + 3)
    )
    segments = [json.loads(line) for line in (out / "segments.jsonl").read_text().splitlines()]
    assert [(s["start_step"], s["end_step"], s["ended"]) for s in segments] == [
        (0, step, "stopped by SIGTERM"),
        (step, step + 2, "finished"),
    ]
