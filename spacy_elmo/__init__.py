"""spacy-elmo: ELMo deep contextual biLM features for spaCy pipelines."""

from .chars import CharacterIds, batch_to_ids
from .formats.allennlp import ElmoFormatError, load_bilm, save_bilm
from .model import BiLM, BiLMConfig, ScalarMix, preset

__version__ = "0.1.0"
__all__ = [
    "BiLM",
    "BiLMConfig",
    "CharacterIds",
    "ElmoFormatError",
    "ScalarMix",
    "batch_to_ids",
    "load_bilm",
    "preset",
    "save_bilm",
]
