"""Pretraining configuration: a spaCy-style .cfg file, resolved with spaCy's registry.

Sections: [paths] [system] [model] [tokenizer] [vocab] [data] [objective] [optimizer]
[training]; see project/configs/pretrain_tiny.cfg for every setting with its meaning.
"""

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union, get_args, get_origin

import spacy
import torch
from confection import Config

from ..model import BiLMConfig
from ..model.config import preset as named_preset
from .batches import MODES
from .sentences import SentenceSplitter

OptimizerFactory = Callable[[Iterable[torch.nn.Parameter]], torch.optim.Optimizer]


@spacy.registry.misc("spacy-elmo.BiLMConfig.v1")
def bilm_config(
    preset: str = "tiny",
    char_embedding_dim: Optional[int] = None,
    filters: Optional[List[List[int]]] = None,
    n_highway: Optional[int] = None,
    lstm_dim: Optional[int] = None,
    projection_dim: Optional[int] = None,
    n_layers: Optional[int] = None,
    cell_clip: Optional[float] = None,
    proj_clip: Optional[float] = None,
    use_skip_connections: Optional[bool] = None,
) -> BiLMConfig:
    """A named preset (tiny, small, medium, original) with any of its sizes replaced."""
    changes = {k: v for k, v in locals().items() if k != "preset" and v is not None}
    return named_preset(preset).with_changes(**changes)


@spacy.registry.misc("spacy-elmo.Adagrad.v1")
def adagrad(lr: float = 0.2, initial_accumulator: float = 1.0) -> OptimizerFactory:
    """bilm-tf's optimizer: Adagrad with learning rate 0.2 and initial accumulator 1.0."""
    return lambda params: torch.optim.Adagrad(params, lr=lr, initial_accumulator_value=initial_accumulator)


@spacy.registry.misc("spacy-elmo.Adam.v1")
def adam(lr: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> OptimizerFactory:
    return lambda params: torch.optim.Adam(params, lr=lr, betas=(beta1, beta2), eps=eps)


class _Section:
    """A plain config section read into a dataclass; unknown keys, values below their minimum
    (``_minimum``: setting -> smallest allowed value) and values outside their choices
    (``_choices``: setting -> allowed values) are errors."""

    _minimum: Dict[str, float] = {}
    _choices: Dict[str, Tuple[str, ...]] = {}

    @classmethod
    def from_section(cls, name: str, values: Dict[str, Any]):
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(
                f"Unknown setting(s) in [{name}]: {', '.join(unknown)}. Known: {', '.join(sorted(known))}."
            )
        for key, value in values.items():
            _check_type(f"{name}.{key}", value, known[key].type)
        section = cls(**values)
        for key, minimum in cls._minimum.items():
            if getattr(section, key) < minimum:
                raise ValueError(f"{name}.{key} must be at least {minimum}, got {getattr(section, key)}.")
        for key, choices in cls._choices.items():
            if getattr(section, key) not in choices:
                raise ValueError(f"{name}.{key} must be one of {choices}, got {getattr(section, key)!r}.")
        return section


_TYPE_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _check_type(setting: str, value: Any, annotation: Any) -> None:
    """A config value of the field's type, or a ValueError naming the setting and the type."""
    allowed = get_args(annotation) if get_origin(annotation) is Union else (annotation,)
    if value is None and type(None) in allowed:
        return
    for kind in allowed:
        if kind is bool and isinstance(value, bool):
            return
        if kind is int and isinstance(value, int) and not isinstance(value, bool):
            return
        if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return
        if kind is str and isinstance(value, str):
            return
    expected = " or ".join(_TYPE_NAMES.get(kind, "null" if kind is type(None) else str(kind)) for kind in allowed)
    hint = " (a command-line flag without a value?)" if value is True else ""
    raise ValueError(f"{setting} must be {expected}, got {value!r}{hint}. Example: --{setting} {_example(allowed)}.")


def _example(allowed: Tuple[Any, ...]) -> str:
    return {int: "1000", float: "0.5", bool: "false", str: "value"}.get(
        next(k for k in allowed if k is not type(None)), "value"
    )


@dataclass
class PathSettings(_Section):
    train: Optional[str] = None  # text file(s) or folder to train on
    dev: Optional[str] = None  # held-out text for perplexity and model-best
    vocab: Optional[str] = None  # vocab.txt to use instead of building one
    init_bilm: Optional[str] = None  # folder with options.json + weights hdf5 to fine-tune
    init_softmax: Optional[str] = None  # softmax hdf5 matching paths.vocab


@dataclass
class SystemSettings(_Section):
    seed: int = 0
    device: str = "auto"  # auto (cuda if available), cpu, cuda or cuda:N
    threads: int = (
        0  # torch intra-op threads per process; 0: torch's default, lowered to the cores other processes leave free
    )
    fast_path: bool = True  # the training fast path (same loss and gradients); false: the exact reference code
    mixed_precision: Union[bool, str] = "auto"  # bf16 matmuls: "auto" where the hardware runs them fast, true, false

    def __post_init__(self) -> None:
        if self.mixed_precision not in (True, False, "auto"):
            raise ValueError(f'system.mixed_precision must be true, false or "auto", got {self.mixed_precision!r}.')


@dataclass
class VocabSettings(_Section):
    _minimum = {"max_size": 0, "min_count": 1}
    max_size: int = 100_000
    min_count: int = 1


@dataclass
class DataSettings(_Section):
    _minimum = {"batch_size": 1, "unroll_steps": 1, "max_line_bytes": 1, "segments_per_file": 1}
    _choices = {"mode": MODES}
    mode: str = "stream"  # stream: stateful truncated BPTT; sentences: stateless sentence batches
    batch_size: int = 32  # rows per step, over all processes
    unroll_steps: int = 20
    max_line_bytes: int = 1_000_000
    text_field: str = "text"  # the field holding the text in .jsonl files
    interleave_files: bool = True  # mix several training files in proportion to their lines, not one after another
    segments_per_file: int = 16  # with interleave_files, mix each file's parts likewise (a file sorted by source)


@dataclass
class ObjectiveSettings(_Section):
    _minimum = {"n_negatives": 0, "dropout": 0.0}
    n_negatives: int = 8192  # sampled softmax negatives per step; 0 (or >= vocab size): full softmax
    dropout: float = 0.1


@dataclass
class TrainingSettings(_Section):
    _minimum = {
        "max_steps": 1,
        "max_minutes": 0.0,
        "grad_clip": 0.0,
        "log_every": 1,
        "eval_every": 1,
        "checkpoint_minutes": 0.0,
        "dev_batch_size": 1,
        "max_dev_sentences": 0,
    }
    max_steps: int = 1000
    max_minutes: float = (
        0.0  # wall-clock budget of this run (a resumed run gets it anew): then evaluate, save, stop; 0: none
    )
    grad_clip: float = 10.0  # global gradient-norm clipping; 0: none
    log_every: int = 10
    eval_every: int = 200  # dev perplexity, model-last, model-best and checkpoint
    checkpoint_minutes: float = (
        10.0  # also a checkpoint at the first log step this long after the last; 0: only at evaluations
    )
    dev_batch_size: int = 64
    max_dev_sentences: int = 0  # 0: the whole dev text
    resume: bool = True  # continue from OUTPUT_DIR/checkpoint.pt if present
    progress_bar: bool = True
    train_bilm: bool = True  # false: only the softmax learns, the biLM of paths.init_bilm stays as loaded


@dataclass
class PretrainSettings:
    paths: PathSettings
    system: SystemSettings
    model: BiLMConfig
    tokenizer: SentenceSplitter
    vocab: VocabSettings
    data: DataSettings
    objective: ObjectiveSettings
    optimizer: OptimizerFactory
    training: TrainingSettings
    config: Config


SECTIONS = ("paths", "system", "model", "tokenizer", "vocab", "data", "objective", "optimizer", "training")


def load_settings(config_path: Union[str, Path], overrides: Optional[Dict[str, Any]] = None) -> PretrainSettings:
    """Read a pretraining .cfg with ``{"section.key": value}`` overrides and resolve it."""
    path = Path(config_path)
    if not path.is_file():
        raise FileNotFoundError(
            f"Config file not found: {path}. Pass one of project/configs/pretrain_*.cfg or your own."
        )
    config = spacy.util.load_config(path, overrides=overrides or {}, interpolate=True)
    return resolve_settings(config)


def resolve_settings(config: Config) -> PretrainSettings:
    missing = [s for s in SECTIONS if s not in config]
    if missing:
        raise ValueError(
            f"Pretraining config lacks section(s) [{'], ['.join(missing)}]; see project/configs/pretrain_tiny.cfg."
        )
    resolved = spacy.registry.resolve({name: config[name] for name in SECTIONS}, validate=True)
    plain: Tuple[Tuple[str, type], ...] = (
        ("paths", PathSettings),
        ("system", SystemSettings),
        ("vocab", VocabSettings),
        ("data", DataSettings),
        ("objective", ObjectiveSettings),
        ("training", TrainingSettings),
    )
    sections = {name: cls.from_section(name, dict(resolved[name])) for name, cls in plain}
    return PretrainSettings(
        model=resolved["model"],
        tokenizer=resolved["tokenizer"],
        optimizer=resolved["optimizer"],
        config=config,
        **sections,
    )


# The pretraining names' first spelling, before all names took the "spacy-elmo." prefix: configs and
# biLM folders written with it still load.
_FIRST_SPELLING = {
    "spacy_elmo.BiLMConfig.v1": "spacy-elmo.BiLMConfig.v1",
    "spacy_elmo.Adagrad.v1": "spacy-elmo.Adagrad.v1",
    "spacy_elmo.Adam.v1": "spacy-elmo.Adam.v1",
    "spacy_elmo.SpacySentences.v1": "spacy-elmo.SpacySentences.v1",
    "spacy_elmo.WhitespaceSentences.v1": "spacy-elmo.WhitespaceSentences.v1",
}
for _old, _new in _FIRST_SPELLING.items():
    spacy.registry.misc.register(_old, func=spacy.registry.misc.get(_new))
