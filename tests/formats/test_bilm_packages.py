"""biLM packages: built from a biLM folder, installed, found by name and as the default."""

import json
import shutil
import sys
import tomllib

import numpy
import pytest
import spacy
import torch
from conftest import pip_install
from typer.testing import CliRunner

from spacy_elmo import save_bilm
from spacy_elmo.cli import app
from spacy_elmo.formats.packages import DEFAULT_BILM, installed_bilms, package_bilm, write_package_source
from spacy_elmo.layers import get_bilm

TEXT = "Anna plays in the park near the theatre."


def _vectors(model_config):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": model_config})
    nlp.initialize()
    return nlp(TEXT)._.elmo_layers


def test_installed_package_gives_the_folders_vectors_by_name_and_as_default(tiny_bilm_dir, tmp_path, monkeypatch):
    folder = tmp_path / "bilm"
    shutil.copytree(tiny_bilm_dir, folder)
    (folder / "meta.json").write_text(json.dumps({"training_text": "a test text", "license": "MIT"}))
    built = package_bilm(folder, tmp_path / "dist", DEFAULT_BILM, "0.0.1")
    assert sorted(p.name for p in built) == [f"{DEFAULT_BILM}-0.0.1-py3-none-any.whl", f"{DEFAULT_BILM}-0.0.1.tar.gz"]
    wheel = next(p for p in built if p.suffix == ".whl")
    pip_install(tmp_path / "site", wheel)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    try:
        assert installed_bilms()[DEFAULT_BILM] == tmp_path / "site" / DEFAULT_BILM / "bilm"
        expected = _vectors({"bilm": str(folder)})
        numpy.testing.assert_array_equal(_vectors({"bilm": DEFAULT_BILM}), expected)
        numpy.testing.assert_array_equal(_vectors({}), expected)  # the default biLM
        numpy.testing.assert_array_equal(
            _vectors({"options_file": str(folder / "options.json"), "weight_file": str(folder / "weights.hdf5")}),
            expected,
        )
        listed = CliRunner().invoke(app, ["info"])
        assert (
            listed.exit_code == 0
            and f"{DEFAULT_BILM} 0.0.1 (default)" in listed.output
            and "license: MIT" in listed.output
        )
        (row,) = json.loads(CliRunner().invoke(app, ["info", "--json"]).output)
        from spacy_elmo import BiLM
        from spacy_elmo.formats import read_options

        assert row["parameters"] == sum(p.numel() for p in BiLM(read_options(folder / "options.json")).parameters())
        assert row["meta"]["training_text"] == "a test text" and row["meta"]["sizes"]["lstm_dim"] == 32
    finally:
        sys.modules.pop(DEFAULT_BILM, None)


def test_unknown_biLM_name_and_missing_default_are_one_line_errors(monkeypatch):
    monkeypatch.setattr("spacy_elmo.formats.packages.entry_points", lambda group: [])
    with pytest.raises(
        ValueError,
        match=r"No biLM 'en_elmo_nope': it is neither a folder with options.json nor an installed biLM package \(installed: none; build one with `python -m spacy_elmo package-bilm",
    ):
        _vectors({"bilm": "en_elmo_nope"})
    with pytest.raises(
        ValueError, match=f"No biLM given and the default '{DEFAULT_BILM}' is not installed. Give one as model.bilm"
    ):
        _vectors({})


def test_package_names_versions_and_folders_are_checked(tiny_bilm_dir, tmp_path):
    with pytest.raises(ValueError, match="Package name 'En-ELMo' must be a Python module name"):
        write_package_source(tiny_bilm_dir, tmp_path, "En-ELMo", "0.1.0")
    with pytest.raises(ValueError, match="Version 'latest' must be numbers separated by dots"):
        write_package_source(tiny_bilm_dir, tmp_path, "en_elmo_x", "latest")
    result = CliRunner().invoke(app, ["package-bilm", str(tmp_path / "missing"), str(tmp_path / "out")])
    assert result.exit_code == 2 and "biLM folder not found" in result.output
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="it got bilm='en_elmo_small', preset='tiny'; give one"):
        spacy.blank("en").add_pipe("elmo", config={"model": {"bilm": "en_elmo_small", "preset": "tiny"}})


def test_pipeline_saved_without_weights_requires_the_package_and_loads_it(tiny_bilm_dir, tmp_path, monkeypatch):
    name = "en_elmo_req"
    wheel = next(p for p in package_bilm(tiny_bilm_dir, tmp_path / "dist", name, "0.2.0") if p.suffix == ".whl")
    pip_install(tmp_path / "site", wheel)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    try:
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config={"model": {"bilm": name, "save_weights": False}})
        nlp.initialize()
        expected = nlp(TEXT)._.elmo_layers
        assert nlp.meta["requirements"] == [f"{name}==0.2.0"]
        nlp.to_disk(tmp_path / "pipeline")
        saved = sum(p.stat().st_size for p in (tmp_path / "pipeline").rglob("*") if p.is_file())
        assert saved < (tiny_bilm_dir / "weights.hdf5").stat().st_size  # no copy of the weights
        assert json.loads((tmp_path / "pipeline" / "meta.json").read_text())["requirements"] == [f"{name}==0.2.0"]
        numpy.testing.assert_array_equal(spacy.load(tmp_path / "pipeline")(TEXT)._.elmo_layers, expected)

        # Weights changed after loading (as fine-tuning does): saving by name would lose them.
        bilm = get_bilm(nlp.get_pipe("elmo").model)
        with torch.no_grad():
            next(bilm.parameters()).add_(0.1)
        with pytest.raises(
            ValueError, match=f"differ from those of the package {name} 0.2.0 .* Set save_weights = true"
        ):
            nlp.to_bytes()

        # Another version of the package installed (other weights), or none.
        other = tmp_path / "other"
        other.mkdir()
        save_bilm(bilm, other / "options.json", other / "weights.hdf5")
        wheel = next(p for p in package_bilm(other, tmp_path / "dist", name, "0.3.0") if p.suffix == ".whl")
        pip_install(tmp_path / "site-other", wheel)
        monkeypatch.syspath_prepend(str(tmp_path / "site-other"))
        sys.modules.pop(name, None)
        with pytest.raises(ValueError, match=f"{name} 0.3.0 has other weights than the {name}==0.2.0 this pipeline"):
            spacy.load(tmp_path / "pipeline")
        monkeypatch.setattr("spacy_elmo.formats.packages.entry_points", lambda group: [])
        with pytest.raises(ValueError, match=f"needs the biLM package {name}==0.2.0, which is not installed"):
            spacy.load(tmp_path / "pipeline")
    finally:
        sys.modules.pop(name, None)


def test_save_weights_false_needs_a_package(tiny_bilm_dir):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="save_weights = false needs the biLM as an installed package"):
        nlp.add_pipe("elmo", config={"model": {"bilm": str(tiny_bilm_dir), "save_weights": False}})
    with pytest.raises(ValueError, match="save_weights = false needs the biLM as an installed package"):
        nlp.add_pipe("elmo", config={"model": {"preset": "tiny", "save_weights": False}})


def test_a_description_outside_ascii_is_valid_in_the_package_metadata(tiny_bilm_dir, tmp_path):
    folder = tmp_path / "bilm"
    shutil.copytree(tiny_bilm_dir, folder)
    description = 'ELMo 🦜 for "Zürich" text\ttabbed'
    (folder / "meta.json").write_text(json.dumps({"description": description}))
    root = write_package_source(folder, tmp_path / "tree", "en_elmo_x", "0.1.0")
    assert tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["description"] == description
