"""A complete `spacy train` config with the elmo component and one ELMo listener per task
component, built from the templates in spacy_elmo/configs and filled in by spaCy."""

import copy
from importlib import resources
from pathlib import Path
from typing import Dict, List, Sequence, Union

import spacy
from confection import Config

from .formats import OPTIONS, find_weights, read_options

OPTIMIZE = ("efficiency", "accuracy")
# Sizes of each task's tok2vec, as spaCy's own CPU configs choose them.
TOK2VEC_SIZES: Dict[str, Dict[str, int]] = {
    "efficiency": {"width": 96, "depth": 4},
    "accuracy": {"width": 256, "depth": 8},
}
GPU_MAX_BATCH_TOKENS = 16384


def _template(name: str) -> Config:
    text = resources.files("spacy_elmo").joinpath("configs", name).read_text(encoding="utf-8")
    return Config().from_str(text, interpolate=False)


def task_components() -> List[str]:
    """The components init_config can add next to elmo."""
    return list(_template("components.cfg")["components"])


def init_config(
    pipeline: Sequence[str],
    bilm_dir: Union[str, Path],
    *,
    optimize: str = "efficiency",
    gpu: bool = False,
    lang: str = "en",
) -> Config:
    """The filled config of an ``elmo`` component reading the biLM in ``bilm_dir`` (its files
    as paths.elmo_options and paths.elmo_weights, absolute) and the task components of
    ``pipeline``, each with its own ElmoListener inside a spacy-elmo.ElmoTok2Vec.v1.
    ``optimize`` sets the tok2vec sizes; ``gpu`` sets gpu_allocator = "pytorch" and larger
    biLM calls. paths.train and paths.dev are left for the command line."""
    known = task_components()
    unknown = [name for name in pipeline if name not in known]
    if not pipeline or unknown:
        raise ValueError(
            f"--pipeline needs task components from {', '.join(known)} (comma-separated, e.g. ner,textcat); "
            f"got {', '.join(unknown) or 'none'}."
        )
    if len(set(pipeline)) != len(pipeline):
        raise ValueError(f"--pipeline names a component twice: {','.join(pipeline)}.")
    if optimize not in OPTIMIZE:
        raise ValueError(f"--optimize must be {' or '.join(OPTIMIZE)}, got {optimize!r}.")
    folder = Path(bilm_dir).resolve()
    weights = find_weights(folder)
    read_options(folder / OPTIONS)  # a clear error now rather than at the first training step

    config = _template("base.cfg")
    components = _template("components.cfg")["components"]
    tok2vec = _template("tok2vec.cfg")["tok2vec"]
    sizes = TOK2VEC_SIZES[optimize]
    tok2vec["width"] = tok2vec["embed"]["width"] = tok2vec["encode"]["width"] = sizes["width"]
    tok2vec["encode"]["depth"] = sizes["depth"]
    for name in pipeline:
        component = copy.deepcopy(components[name])
        component["model"]["tok2vec"] = copy.deepcopy(tok2vec)
        config["components"][name] = component
    config["nlp"]["lang"] = lang
    config["nlp"]["pipeline"] = ["elmo", *pipeline]
    config["paths"]["elmo_options"] = str(folder / OPTIONS)
    config["paths"]["elmo_weights"] = str(weights)
    if gpu:
        config["system"]["gpu_allocator"] = "pytorch"
        config["components"]["elmo"]["model"]["max_batch_tokens"] = GPU_MAX_BATCH_TOKENS
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    return nlp.config
