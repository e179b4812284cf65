"""The biLM's file formats: bilm-tf/AllenNLP options.json and weight hdf5, biLM folders."""
from .allennlp import (
    OPTIONS,
    WEIGHT_FILES,
    ElmoFormatError,
    find_weights,
    load_bilm,
    load_bilm_dir,
    load_weights,
    read_options,
    save_bilm,
    write_options,
)

__all__ = [
    "OPTIONS", "WEIGHT_FILES", "ElmoFormatError", "find_weights", "load_bilm", "load_bilm_dir", "load_weights", "read_options",
    "save_bilm", "write_options",
]
