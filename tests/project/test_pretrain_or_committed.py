"""project.yml's pretrain and perplexity steps with a committed biLM: its files are used
(softmax and vocabulary included, for fine-tuning) and its measured perplexities reported."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "project" / "scripts" / "pretrain_or_committed.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


def test_a_committed_bilm_is_copied_with_its_softmax_and_vocabulary(tiny_bilm_dir, tmp_path):
    committed = tmp_path / "committed"
    shutil.copytree(tiny_bilm_dir, committed)
    (committed / "softmax_weights.hdf5").write_bytes(b"softmax")
    (committed / "vocab.txt").write_text("<S>\n</S>\n<UNK>\nthe\n")
    out = tmp_path / "bilm"
    result = _run("pretrain", str(committed), str(out), "--", "no-such-config.cfg")
    assert result.returncode == 0, result.stderr
    for name in ("options.json", "weights.hdf5", "softmax_weights.hdf5", "vocab.txt"):
        assert (out / "model-best" / name).read_bytes() == (committed / name).read_bytes(), name


def test_the_committed_perplexity_is_reported_not_recomputed(tiny_bilm_dir, tmp_path):
    committed = tmp_path / "committed"
    shutil.copytree(tiny_bilm_dir, committed)
    figures = {"forward": 110.0, "backward": 90.0, "mean": 99.5, "n_tokens": 10, "sentences": "all"}
    (committed / "perplexity.json").write_text(json.dumps({"news.valid": figures}))
    output = tmp_path / "perplexity.json"
    result = _run("perplexity", str(committed), str(tmp_path / "model-best"), "text.txt", "news.valid", str(output))
    assert result.returncode == 0, result.stderr
    written = json.loads(output.read_text())
    assert {k: written[k] for k in figures} == figures and written["model"] == str(committed)
    missing = _run("perplexity", str(committed), str(tmp_path / "model-best"), "text.txt", "ptb.valid", str(output))
    assert missing.returncode == 1 and "has no figures for 'ptb.valid'" in missing.stderr
