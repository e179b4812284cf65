"""Model folders written by pretraining (model-last, model-best) and read by `perplexity`.

Layout: options.json + weights.hdf5 (the published bilm-tf/AllenNLP format),
softmax_weights.hdf5 (softmax/W, softmax/b), vocab.txt, config.cfg and metrics.jsonl.
"""

import os
import shutil
import tempfile
from pathlib import Path
from typing import Optional, Tuple, Union

from confection import Config

from ..atomic import default_mode
from ..formats.allennlp import load_bilm, save_bilm
from .language_model import BiLanguageModel
from .vocab import Vocabulary

OPTIONS, WEIGHTS, SOFTMAX, VOCAB, CONFIG, METRICS = (
    "options.json",
    "weights.hdf5",
    "softmax_weights.hdf5",
    "vocab.txt",
    "config.cfg",
    "metrics.jsonl",
)


def save_model_dir(
    lm: BiLanguageModel,
    vocab: Vocabulary,
    path: Union[str, Path],
    *,
    config: Optional[Config] = None,
    metrics: Optional[Path] = None,
) -> None:
    """Write the folder next to ``path`` and swap it in, so a reader never sees half a model."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        save_bilm(lm.bilm, tmp / OPTIONS, tmp / WEIGHTS)
        lm.softmax.to_disk(tmp / SOFTMAX)
        vocab.to_disk(tmp / VOCAB)
        if config is not None:
            config.to_disk(tmp / CONFIG)
        if metrics is not None and metrics.exists():
            shutil.copyfile(metrics, tmp / METRICS)
        os.chmod(tmp, default_mode(directory=True))
        old = path.with_name(f".{path.name}.old")
        if path.exists():
            shutil.rmtree(old, ignore_errors=True)
            path.rename(old)
        tmp.rename(path)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def load_model_dir(path: Union[str, Path]) -> Tuple[BiLanguageModel, Vocabulary]:
    """The biLM, softmax and vocabulary of a model folder written by pretraining."""
    path = Path(path)
    missing = [name for name in (OPTIONS, WEIGHTS, SOFTMAX, VOCAB) if not (path / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{path} is not a pretrained biLM folder: {', '.join(missing)} missing. "
            "Pass OUTPUT_DIR/model-best or OUTPUT_DIR/model-last of `python -m spacy_elmo pretrain`."
        )
    vocab = Vocabulary.from_disk(path / VOCAB)
    lm = BiLanguageModel(load_bilm(path / OPTIONS, path / WEIGHTS), len(vocab), dropout=0.0)
    lm.softmax.load(path / SOFTMAX)
    return lm, vocab
