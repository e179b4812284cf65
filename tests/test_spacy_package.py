"""`spacy package` builds an installable package of a pipeline with the elmo component."""

import subprocess
import sys

import numpy
import spacy
from conftest import pip_install

TEXT = "The packaged pipeline carries its own biLM weights."


def test_spacy_package_builds_an_installable_package(fixture_model, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": fixture_model})
    nlp.initialize()
    numpy.save(tmp_path / "expected.npy", nlp(TEXT)._.elmo_layers)
    nlp.to_disk(tmp_path / "pipeline")
    (tmp_path / "packages").mkdir()
    package = [sys.executable, "-m", "spacy", "package", str(tmp_path / "pipeline"), str(tmp_path / "packages"), "--name", "elmo_test", "--version", "0.0.1"]  # fmt: skip
    result = subprocess.run(package, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (sdist,) = (tmp_path / "packages").glob("*/dist/*.tar.gz")
    # Offline install: no build isolation (setuptools from this environment), no dependencies.
    pip_install(tmp_path / "site", sdist, "--no-build-isolation")
    check = (
        "import sys, numpy; sys.path.insert(0, sys.argv[1]); import en_elmo_test\n"
        f"doc = en_elmo_test.load()({TEXT!r})\n"
        "numpy.testing.assert_array_equal(doc._.elmo_layers, numpy.load(sys.argv[2])); print('ok', en_elmo_test.__file__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check, str(tmp_path / "site"), str(tmp_path / "expected.npy")],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("ok") and str(tmp_path / "site") in result.stdout
    meta = (tmp_path / "packages" / "en_elmo_test-0.0.1" / "meta.json").read_text()
    assert "spacy-elmo" in meta  # the factory's package is a requirement
