"""The demo (`spacy project run demo`, what `make demo` runs) end to end on its synthetic sample
with tiny budgets, and its use of a committed biLM."""

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from spacy_elmo.formats import save_bilm
from spacy_elmo.model import BiLM, preset

REPO = Path(__file__).parents[2]


def _run(command, **kwargs):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, **kwargs)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_demo_on_the_synthetic_sample_writes_its_results(tmp_path):
    demo_dir = tmp_path / "demo"
    budget = {"data_dir": tmp_path / "no-data", "demo_dir": demo_dir, "demo_bilm": tmp_path / "no-bilm", "demo_pretrain_steps": 8,
              "demo_train_steps": 10, "demo_eval_frequency": 5, "demo_threads": 1}  # fmt: skip
    overrides = [arg for key, value in budget.items() for arg in (f"--vars.{key}", str(value))]
    out = _run([sys.executable, "-m", "spacy", "project", "run", "demo", ".", *overrides])
    results = json.loads((demo_dir / "results.json").read_text())
    assert {"baseline", "elmo", "metric", "delta", "bilm", "seconds", "senses", "data"} <= set(results)
    assert results["delta"] == round(results["elmo"]["ents_f"] - results["baseline"]["ents_f"], 2)
    assert results["data"]["real_data"] is False and "synthetic" in out
    assert results["bilm"]["source"].startswith("pretrained in this demo")
    curve = results["bilm"]["pretraining_curve"]
    assert [p["step"] for p in curve] == [2, 4, 6, 8] and curve[-1]["dev_perplexity"] < curve[0]["dev_perplexity"]
    agreement = results["senses"]["same_sense_neighbour"]
    assert agreement["char_cnn_layer_0"] == results["senses"]["chance"]  # one vector for every occurrence: ties
    assert (demo_dir / "senses.png").stat().st_size > 10_000 and str(demo_dir / "senses.png") in out
    assert "delta F1" in out and "ELMo features" in out


def test_demo_uses_a_committed_bilm_and_still_shows_pretraining(tmp_path):
    torch.manual_seed(0)
    committed = tmp_path / "bilm"
    committed.mkdir()
    save_bilm(BiLM(preset("tiny")), committed / "options.json", committed / "weights.hdf5")
    data = tmp_path / "data"
    _run([sys.executable, "project/scripts/demo_data.py", str(tmp_path / "no-data"), str(data), "--lm-lines", "400"])
    out = _run([sys.executable, "project/scripts/demo_bilm.py", str(data), str(tmp_path / "out"), "--committed", str(committed),
                "--showcase-steps", "4", "--batch-size", "8", "--threads", "1"])  # fmt: skip
    info = json.loads((tmp_path / "out" / "bilm.json").read_text())
    assert info["source"] == f"the study's biLM ({committed})" and "perplexity falling" in out
    assert (tmp_path / "out" / "model-best" / "weights.hdf5").read_bytes() == (committed / "weights.hdf5").read_bytes()
    assert [p["step"] for p in info["pretraining_curve"]] == [1, 2, 3, 4]
