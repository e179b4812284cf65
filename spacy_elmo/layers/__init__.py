"""Thinc layers and registered architectures for ELMo in spaCy pipelines."""

from .bilm import ElmoBiLM, bilm_requirement, get_bilm, get_feature_cache
from .cache import FeatureCache
from .listener import ElmoEmbed, ElmoListener, ElmoListenerV1
from .mix import ScalarMixLayer, find_mixes, learned_mix, mix_layers, mix_weights
from .sequences import DocLayers
from .tok2vec import ElmoTok2Vec

__all__ = [
    "DocLayers",
    "ElmoBiLM",
    "ElmoEmbed",
    "ElmoListener",
    "ElmoListenerV1",
    "ElmoTok2Vec",
    "FeatureCache",
    "ScalarMixLayer",
    "bilm_requirement",
    "find_mixes",
    "get_bilm",
    "get_feature_cache",
    "learned_mix",
    "mix_layers",
    "mix_weights",
]
