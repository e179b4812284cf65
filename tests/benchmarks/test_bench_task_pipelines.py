"""benchmarks/bench_task_pipelines.py times each pipeline cold: an `elmo` component's feature
cache is off, so repeated rounds do not time cache hits."""

import importlib.util
from pathlib import Path

import spacy

REPO = Path(__file__).parents[2]


def _bench_module(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))  # it imports bench_bilm, as run from there
    spec = importlib.util.spec_from_file_location(
        "bench_task_pipelines", REPO / "benchmarks" / "bench_task_pipelines.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pipelines_are_loaded_with_the_feature_cache_off(tmp_path, monkeypatch):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"preset": "tiny", "cache_mb": 64}})
    nlp.add_pipe("sentencizer")
    nlp.initialize()
    nlp.to_disk(tmp_path / "elmo")
    plain = spacy.blank("en")
    plain.add_pipe("sentencizer")
    plain.to_disk(tmp_path / "plain")
    bench = _bench_module(monkeypatch)
    assert bench.load_cold(str(tmp_path / "elmo")).config["components"]["elmo"]["model"]["cache_mb"] == 0
    assert bench.load_cold(str(tmp_path / "plain")).pipe_names == ["sentencizer"]
