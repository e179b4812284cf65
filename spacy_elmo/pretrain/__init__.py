"""biLM pretraining: raw text to a trained forward + backward language model."""

from .config import PretrainSettings, load_settings
from .corpus import CorpusError, TextLines
from .evaluate import Perplexity, perplexity
from .export import load_model_dir, save_model_dir
from .language_model import BiLanguageModel
from .softmax import LogUniformSampler, Softmax
from .train import TrainingDiverged, TrainingStopped, pretrain
from .vocab import Vocabulary

__all__ = [
    "BiLanguageModel",
    "CorpusError",
    "LogUniformSampler",
    "Perplexity",
    "PretrainSettings",
    "Softmax",
    "TextLines",
    "TrainingDiverged",
    "TrainingStopped",
    "Vocabulary",
    "load_model_dir",
    "load_settings",
    "perplexity",
    "pretrain",
    "save_model_dir",
]
