"""Shared test fixtures: paths into ../shared/data, skipping when it is absent; a
derandomized hypothesis profile; torch's thread count restored after each test."""
from pathlib import Path

import pytest
import torch
from hypothesis import settings

SHARED_DATA = (Path(__file__).parents[1] / ".." / "shared" / "data").resolve()

# The same examples on every run: a failure is reproducible, a pass is not luck.
settings.register_profile("ci", derandomize=True, deadline=None, database=None)
settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    """In-process pretraining calls torch.set_num_threads (system.threads); later tests
    must not inherit it."""
    threads = torch.get_num_threads()
    yield
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    """The tiny real ELMo model: options.json + lm_weights.hdf5 (2 layers, output dim 32)."""
    path = SHARED_DATA / "elmo_fixtures" / "allennlp"
    if not (path / "options.json").exists():
        pytest.skip(f"{path} is absent")
    return path


@pytest.fixture(scope="session")
def conll_dir() -> Path:
    """CoNLL-2003 English (eng.train, eng.testa, eng.testb)."""
    path = SHARED_DATA / "ner" / "conll2003"
    if not (path / "eng.train").exists():
        pytest.skip(f"{path} is absent")
    return path
