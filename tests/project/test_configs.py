"""The shipped spaCy training configs: `spacy init fill-config` works on each, and `spacy train`
without a biLM says in one message which settings to give."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_elmo.formats.packages import DEFAULT_BILM, installed_bilms

REPO = Path(__file__).parents[2]
TRAINING_CONFIGS = sorted(p for p in (REPO / "project" / "configs").glob("*.cfg") if not p.name.startswith("pretrain_"))


def _run(*args):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "spacy", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800
    )


@pytest.mark.parametrize("config", TRAINING_CONFIGS, ids=lambda p: p.name)
def test_fill_config_works_on_every_shipped_config(config, tmp_path):
    result = _run("init", "fill-config", str(config), str(tmp_path / "filled.cfg"))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert spacy.util.load_config(tmp_path / "filled.cfg")["nlp"]["pipeline"]


def test_spacy_train_without_a_bilm_uses_the_default_or_names_the_settings(tmp_path):
    nlp = spacy.blank("en")
    DocBin(docs=[Doc(nlp.vocab, words=["Anna", "flew", "to", "Paris"], ents=["B-PER", "O", "O", "B-LOC"])] * 4).to_disk(
        tmp_path / "d.spacy"
    )
    result = _run("train", str(REPO / "project" / "configs" / "ner_elmo.cfg"), "--paths.train", str(tmp_path / "d.spacy"),
                  "--paths.dev", str(tmp_path / "d.spacy"), "--training.max_steps", "2", "--training.eval_frequency", "1")  # fmt: skip
    output = " ".join((result.stdout + result.stderr).split())
    if DEFAULT_BILM in installed_bilms():  # `make demo` installs the default biLM package: it is used
        assert result.returncode == 0, output[-2000:]
        return
    assert result.returncode == 1
    assert "Traceback" not in output
    assert f"spacy-elmo.ElmoBiLM.v1: No biLM given and the default '{DEFAULT_BILM}' is not installed." in output
    assert "--paths.elmo_options and --paths.elmo_weights" in output
