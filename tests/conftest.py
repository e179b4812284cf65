"""Shared test fixtures: paths into ../shared/data, skipping when it is absent."""
from pathlib import Path

import pytest

SHARED_DATA = (Path(__file__).parents[1] / ".." / "shared" / "data").resolve()


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
