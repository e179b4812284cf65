"""torchrun with 2 gloo processes trains exactly like 1 process with the same global batch."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from spacy_elmo.pretrain import load_model_dir, load_settings, pretrain

REPO = Path(__file__).parents[1]
CONFIG = REPO / "project" / "configs" / "pretrain_tiny.cfg"
# Summation order differs between 1 and 2 processes, so weights agree to float32 rounding.
WEIGHT_TOLERANCE = 1e-5
LOSS_TOLERANCE = 1e-5

OVERRIDES = {
    "model.char_embedding_dim": 4,
    "model.filters": [[1, 8], [2, 8], [3, 16]],
    "model.lstm_dim": 32,
    "model.projection_dim": 16,
    "model.n_highway": 1,
    "system.threads": 1,
    "objective.dropout": 0.0,
    "objective.n_negatives": 8,
    "data.batch_size": 4,
    "data.unroll_steps": 6,
    "training.max_steps": 6,
    "training.eval_every": 3,
    "training.log_every": 1,
    "training.progress_bar": False,
}


@pytest.mark.parametrize("mode", ["stream", "sentences"])
def test_two_gloo_processes_match_one_process(tmp_path, mode):
    text = tmp_path / "text.txt"
    text.write_text(
        "The cat sat on the mat. The dog sat on the log.\n"
        "A cat and a dog met on the mat.\nThe log was wet, the mat was dry.\n"
        "Dogs and cats, mats and logs.\nNo cat sat on the dog.\n"
    )
    overrides = {**OVERRIDES, "paths.train": str(text), "paths.dev": str(text), "data.mode": mode}
    args = [a for key, value in overrides.items() for a in (f"--{key}", value if isinstance(value, str) else json.dumps(value))]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    two = tmp_path / "two"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "spacy_elmo", "pretrain", str(CONFIG), str(two), *args]
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]

    one = tmp_path / "one"
    pretrain(load_settings(CONFIG, overrides), one)

    logs = [[json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()] for out in (one, two)]
    assert [r["step"] for r in logs[1]] == list(range(1, 7))
    for a, b in zip(*logs):
        assert b["tokens"] == a["tokens"]
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=LOSS_TOLERANCE)
    assert logs[1][-1]["dev_perplexity"]["mean"] == pytest.approx(logs[0][-1]["dev_perplexity"]["mean"], rel=LOSS_TOLERANCE)
    (lm1, _), (lm2, _) = load_model_dir(one / "model-last"), load_model_dir(two / "model-last")
    for (name, p1), (_, p2) in zip(lm1.named_parameters(), lm2.named_parameters()):
        assert torch.allclose(p1, p2, atol=WEIGHT_TOLERANCE), (name, (p1 - p2).abs().max())
    # The weights moved between the evaluations at steps 3 and 6, far more than the tolerance.
    moved = abs(logs[0][5]["dev_perplexity"]["mean"] / logs[0][2]["dev_perplexity"]["mean"] - 1)
    assert moved > 100 * LOSS_TOLERANCE
