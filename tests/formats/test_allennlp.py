"""options.json + weights.hdf5: bit-exact round trip and clear errors for bad files."""

import json
import os
import shutil
import stat

import h5py
import numpy
import pytest
import torch
from conftest import SHARED_DATA

from spacy_elmo.formats.allennlp import (
    ElmoFormatError,
    config_from_options,
    config_to_options,
    load_bilm,
    read_options,
    save_bilm,
)
from spacy_elmo.model import BiLM, BiLMConfig

FIXTURES = SHARED_DATA / "elmo_fixtures"
needs_fixtures = pytest.mark.skipif(not FIXTURES.exists(), reason="../shared/data/elmo_fixtures is absent")

TINY = BiLMConfig(
    char_embedding_dim=4,
    filters=[(1, 4), (2, 8)],
    n_highway=1,
    lstm_dim=12,
    projection_dim=6,
    use_skip_connections=True,
)


def _datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[...]) if isinstance(obj, h5py.Dataset) else None)
    return out


@needs_fixtures
@pytest.mark.parametrize("folder", ["allennlp", "bilm-tf/model"])
def test_published_files_round_trip_bit_exact(tmp_path, folder):
    options, weights = FIXTURES / folder / "options.json", FIXTURES / folder / "lm_weights.hdf5"
    model = load_bilm(options, weights)
    save_bilm(model, tmp_path / "options.json", tmp_path / "weights.hdf5")
    original, written = _datasets(weights), _datasets(tmp_path / "weights.hdf5")
    assert sorted(original) == sorted(written)
    for key in original:
        assert original[key].dtype == written[key].dtype == numpy.float32
        assert numpy.array_equal(original[key], written[key]), key
    assert json.loads((tmp_path / "options.json").read_text()) == json.loads(options.read_text())
    assert read_options(tmp_path / "options.json") == read_options(options)


def test_fresh_model_round_trip(tmp_path):
    torch.manual_seed(0)
    model = BiLM(TINY)
    save_bilm(model, tmp_path / "o.json", tmp_path / "w.hdf5")
    again = load_bilm(tmp_path / "o.json", tmp_path / "w.hdf5")
    for (name, a), (_, b) in zip(model.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a, b), name
    assert not list(tmp_path.glob(".*.tmp")), "temporary files left behind"


def test_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="options file not found: .*nope.json"):
        read_options(tmp_path / "nope.json")
    save_bilm(BiLM(TINY), tmp_path / "o.json", tmp_path / "w.hdf5")
    with pytest.raises(FileNotFoundError, match="weight file not found: .*gone.hdf5"):
        load_bilm(tmp_path / "o.json", tmp_path / "gone.hdf5")


def test_options_that_are_not_elmo(tmp_path):
    bad = tmp_path / "options.json"
    bad.write_text("{not json")
    with pytest.raises(ElmoFormatError, match="not valid JSON"):
        read_options(bad)
    bad.write_text(json.dumps({"lstm": {"dim": 8}}))
    with pytest.raises(ElmoFormatError, match="not an ELMo options file.*'char_cnn'"):
        read_options(bad)
    options = config_to_options(TINY)
    options["char_cnn"]["activation"] = "gelu"
    bad.write_text(json.dumps(options))
    with pytest.raises(ElmoFormatError, match="activation must be 'relu' or 'tanh'"):
        read_options(bad)
    options = config_to_options(TINY)
    options["char_cnn"]["filters"] = 7
    bad.write_text(json.dumps(options))
    with pytest.raises(ElmoFormatError, match=str(bad)):
        read_options(bad)


def test_options_that_do_not_fit_the_weights(tmp_path):
    save_bilm(BiLM(TINY), tmp_path / "o.json", tmp_path / "w.hdf5")
    other = TINY.with_changes(lstm_dim=16)
    (tmp_path / "o2.json").write_text(json.dumps(config_to_options(other)))
    with pytest.raises(ElmoFormatError, match=r"W_0 has shape \(12, 48\), but the options give \(12, 64\)"):
        load_bilm(tmp_path / "o2.json", tmp_path / "w.hdf5")
    deeper = TINY.with_changes(n_highway=2)
    (tmp_path / "o3.json").write_text(json.dumps(config_to_options(deeper)))
    with pytest.raises(ElmoFormatError, match="missing, first \\['CNN_high_1/W_carry'"):
        load_bilm(tmp_path / "o3.json", tmp_path / "w.hdf5")
    # Weights with more layers than the options describe: refused, not loaded in part.
    save_bilm(BiLM(deeper.with_changes(n_layers=3)), tmp_path / "o4.json", tmp_path / "w4.hdf5")
    with pytest.raises(
        ElmoFormatError, match=r"holds 10 biLM dataset\(s\) that the options do not describe, first \['CNN_high_1/"
    ):
        load_bilm(tmp_path / "o.json", tmp_path / "w4.hdf5")


def test_hdf5_that_is_not_elmo(tmp_path):
    (tmp_path / "o.json").write_text(json.dumps(config_to_options(TINY)))
    with h5py.File(tmp_path / "other.hdf5", "w") as f:
        f.create_dataset("layer1/kernel", data=numpy.zeros((3, 3)))
    with pytest.raises(ElmoFormatError, match="other.hdf5 is not an ELMo biLM.*char_embed"):
        load_bilm(tmp_path / "o.json", tmp_path / "other.hdf5")


def test_truncated_and_non_hdf5_files(tmp_path):
    save_bilm(BiLM(TINY), tmp_path / "o.json", tmp_path / "w.hdf5")
    data = (tmp_path / "w.hdf5").read_bytes()
    (tmp_path / "cut.hdf5").write_bytes(data[: len(data) // 2])
    with pytest.raises(ElmoFormatError, match="cut.hdf5 could not be read as HDF5.*truncated"):
        load_bilm(tmp_path / "o.json", tmp_path / "cut.hdf5")
    (tmp_path / "text.hdf5").write_text("hello")
    with pytest.raises(ElmoFormatError, match="text.hdf5 could not be read as HDF5"):
        load_bilm(tmp_path / "o.json", tmp_path / "text.hdf5")
    with pytest.raises(ElmoFormatError, match="is a directory"):
        load_bilm(tmp_path / "o.json", tmp_path)


@needs_fixtures
def test_loading_does_not_touch_the_fixture(tmp_path):
    copy = tmp_path / "lm_weights.hdf5"
    shutil.copy(FIXTURES / "allennlp/lm_weights.hdf5", copy)
    before = copy.read_bytes()
    load_bilm(FIXTURES / "allennlp/options.json", copy)
    assert copy.read_bytes() == before


def test_written_files_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        save_bilm(BiLM(TINY), tmp_path / "o.json", tmp_path / "w.hdf5")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "w.hdf5").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "o.json").stat().st_mode) == 0o644


def test_options_with_an_invalid_size_name_their_source():
    options = config_to_options(TINY)
    options["char_cnn"]["n_highway"] = -1
    with pytest.raises(ValueError, match="^my.json: Invalid biLM configuration: n_highway must be >= 0"):
        config_from_options(options, source="my.json")
    assert config_from_options(config_to_options(TINY)) == TINY
