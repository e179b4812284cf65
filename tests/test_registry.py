"""Entry points: the factory and architectures resolve by name, without importing spacy_elmo."""

import re
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
import spacy
from thinc.api import Config

ARCHITECTURES = [
    "spacy-elmo.ElmoBiLM.v1",
    "spacy-elmo.ElmoListener.v1",
    "spacy-elmo.ElmoEmbed.v1",
    "spacy-elmo.ElmoTok2Vec.v1",
]
MISC = ["spacy-elmo.BiLMConfig.v1", "spacy-elmo.Adagrad.v1", "spacy-elmo.Adam.v1", "spacy-elmo.SpacySentences.v1", "spacy-elmo.WhitespaceSentences.v1"]  # fmt: skip


def test_entry_points_are_installed():
    assert "elmo" in {ep.name for ep in entry_points(group="spacy_factories")}
    assert set(ARCHITECTURES) <= {ep.name for ep in entry_points(group="spacy_architectures")}
    assert set(MISC) <= {ep.name for ep in entry_points(group="spacy_misc")}


def test_every_registered_name_has_the_prefix_and_a_version():
    import spacy_elmo.pipeline  # noqa: F401  (registers the component factory)
    import spacy_elmo.pretrain  # noqa: F401  (registers the pretraining names)

    ours = {  # every function of this package in any of spaCy's registries, whatever its name
        kind: {
            name
            for name, func in getattr(spacy.registry, kind).get_all().items()
            if getattr(func, "__module__", "").startswith("spacy_elmo")
        }
        for kind in spacy.registry.get_registry_names()
    }
    assert ours.pop("factories") == {"elmo"}  # a component's name, as spaCy's own are: unversioned
    ours = set().union(*ours.values())
    first_spelling = {name for name in ours if name.startswith("spacy_elmo.")}
    assert ours - first_spelling == set(ARCHITECTURES) | set(MISC)
    assert first_spelling == {name.replace("spacy-elmo.", "spacy_elmo.") for name in MISC}
    assert all(re.fullmatch(r"spacy[-_]elmo\.\w+\.v\d+", name) for name in ours), sorted(ours)


def test_the_first_spelling_of_the_pretraining_names_still_resolves():
    import spacy_elmo.pretrain  # noqa: F401

    for name in MISC:
        old = name.replace("spacy-elmo.", "spacy_elmo.")
        assert spacy.registry.misc.get(old) is spacy.registry.misc.get(name)


def test_factory_and_architectures_load_in_a_fresh_interpreter():
    script = (
        "import spacy, sys\n"
        f"names = {ARCHITECTURES!r}\n"
        "funcs = [spacy.registry.architectures.get(n).__name__ for n in names]\n"
        f"funcs += [spacy.registry.misc.get(n).__name__ for n in {MISC!r}]\n"
        "print(' '.join(funcs), spacy.blank('en').has_factory('elmo'))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "ElmoBiLM",
        "ElmoListenerV1",
        "ElmoEmbed",
        "ElmoTok2Vec",
        "bilm_config",
        "adagrad",
        "adam",
        "spacy_sentences",
        "whitespace_sentences",
        "True",
    ]


def test_architectures_build_from_config():
    config = Config().from_str(
        """
        [model]
        @architectures = "spacy-elmo.ElmoTok2Vec.v1"
        width = 16

        [model.embed]
        @architectures = "spacy.MultiHashEmbed.v2"
        width = 16
        attrs = ["NORM"]
        rows = [100]
        include_static_vectors = false

        [model.elmo]
        @architectures = "spacy-elmo.ElmoListener.v1"
        grad_factor = 0.5
        layer_norm = true

        [model.encode]
        @architectures = "spacy.MaxoutWindowEncoder.v2"
        width = 16
        depth = 1
        window_size = 1
        maxout_pieces = 2
        """
    )
    model = spacy.registry.resolve(config)["model"]
    listener = model.get_ref("elmo")
    assert listener.upstream_name == "*" and listener.grad_factor == 0.5
    assert listener.mix.attrs["layer_norm"] is True and listener.mix.attrs["need_input_grad"] is True
    assert model.get_dim("nO") == 16


def test_listener_without_an_upstream_names_the_fix():
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "textcat",
        config={
            "model": {
                "@architectures": "spacy.TextCatReduce.v1",
                "exclusive_classes": True,
                "use_reduce_first": False,
                "use_reduce_last": False,
                "use_reduce_max": False,
                "use_reduce_mean": True,
                "tok2vec": {"@architectures": "spacy-elmo.ElmoListener.v1"},
            }
        },
    )
    nlp.get_pipe("textcat").add_label("A")
    nlp.get_pipe("textcat").add_label("B")
    with pytest.raises(ValueError, match="Put the 'elmo' component before"):
        nlp.initialize()


def test_listener_needs_stored_layers(fixture_dir):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"store_layers": False, "model": {"options_file": str(fixture_dir / "options.json")}})
    textcat_model = {"@architectures": "spacy.TextCatReduce.v1", "exclusive_classes": True, "use_reduce_first": False, "use_reduce_last": False, "use_reduce_max": False, "use_reduce_mean": True, "tok2vec": {"@architectures": "spacy-elmo.ElmoListener.v1"}}  # fmt: skip
    with pytest.raises(ValueError, match="Set store_layers = true"):
        nlp.add_pipe("textcat", config={"model": textcat_model})
