"""The biLM's torch modules."""

from .bilm import BiLM, BiLMOutput
from .config import PRESETS, BiLMConfig, preset
from .fast import FastBiLM
from .lstm import LstmState
from .scalar_mix import ScalarMix

__all__ = ["BiLM", "BiLMConfig", "BiLMOutput", "FastBiLM", "LstmState", "PRESETS", "ScalarMix", "preset"]
