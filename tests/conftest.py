"""Shared test fixtures: paths into ../shared/data (or $SPACY_ELMO_SHARED_DATA), skipping when
it is absent; the tiny ELMo model, random where the data is absent; a small random biLM folder; a derandomized hypothesis profile; torch's thread count fixed (no thread
governor) and restored after each test."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import settings

SHARED_DATA = Path(
    os.environ.get("SPACY_ELMO_SHARED_DATA", Path(__file__).parents[1] / ".." / "shared" / "data")
).resolve()

# The sizes of ../shared/data/elmo_fixtures/allennlp/options.json (2 layers, output dim 32).
FIXTURE_OPTIONS = {
    "char_embedding_dim": 4,
    "filters": [(1, 4), (2, 8), (3, 16), (4, 32), (5, 64)],
    "n_highway": 2,
    "lstm_dim": 64,
    "projection_dim": 16,
    "cell_clip": 3.0,
    "proj_clip": 3.0,
}

# The same examples on every run: a failure is reproducible, a pass is not luck.
settings.register_profile("ci", derandomize=True, deadline=None, database=None)
settings.load_profile("ci")

# Float sums depend on torch's thread count: tests that compare outputs exactly (in this process
# or in subprocesses, which inherit the variable) must not see the governor change it between
# calls. tests/test_threads.py sets the policy itself.
os.environ["SPACY_ELMO_THREADS"] = "fixed"


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    """In-process pretraining calls torch.set_num_threads (system.threads); later tests
    must not inherit it."""
    threads = torch.get_num_threads()
    yield
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def fixture_dir(tmp_path_factory) -> Path:
    """The tiny real ELMo model: options.json + lm_weights.hdf5 (2 layers, output dim 32); where
    the shared data is absent, a random biLM of the same sizes in the same two files."""
    path = SHARED_DATA / "elmo_fixtures" / "allennlp"
    if (path / "options.json").exists():
        return path
    from spacy_elmo import BiLM, BiLMConfig, save_bilm

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("elmo_fixture")
    save_bilm(BiLM(BiLMConfig(**FIXTURE_OPTIONS)), path / "options.json", path / "lm_weights.hdf5")
    return path


@pytest.fixture(scope="session")
def fixture_model(fixture_dir) -> dict:
    """The elmo component's `model` settings that load the fixture's biLM."""
    return {"options_file": str(fixture_dir / "options.json"), "weight_file": str(fixture_dir / "lm_weights.hdf5")}


def pip_install(target: Path, package: Path, *flags: str) -> None:
    """Install a wheel or sdist into the folder `target`, offline and without dependencies."""
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", *flags, "--target", str(target), str(package)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.fixture(scope="session")
def conll_dir() -> Path:
    """CoNLL-2003 English (eng.train, eng.testa, eng.testb)."""
    path = SHARED_DATA / "ner" / "conll2003"
    if not (path / "eng.train").exists():
        pytest.skip(f"{path} is absent")
    return path


@pytest.fixture(scope="session")
def tiny_bilm_dir(tmp_path_factory) -> Path:
    """A random biLM far smaller than the `tiny` preset, saved as options.json + weights.hdf5
    (2 LSTM layers, output dim 32): runs anywhere, no shared data needed."""
    from spacy_elmo import BiLM, BiLMConfig, save_bilm

    torch.manual_seed(0)
    config = BiLMConfig(
        char_embedding_dim=4, filters=[(1, 8), (2, 8), (3, 16)], n_highway=1, lstm_dim=32, projection_dim=16
    )
    path = tmp_path_factory.mktemp("tiny_bilm")
    save_bilm(BiLM(config), path / "options.json", path / "weights.hdf5")
    return path
