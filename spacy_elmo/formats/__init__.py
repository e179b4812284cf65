"""The biLM's file formats: bilm-tf/AllenNLP options.json, weight and softmax hdf5, biLM folders
(allennlp.py), and biLM folders as installable packages (packages.py)."""

from .allennlp import (
    OPTIONS,
    WEIGHT_FILES,
    ElmoFormatError,
    config_from_options,
    config_to_options,
    find_weights,
    load_bilm,
    load_bilm_dir,
    load_weights,
    read_options,
    read_softmax,
    save_bilm,
    write_options,
    write_softmax,
)

__all__ = [
    "OPTIONS",
    "WEIGHT_FILES",
    "ElmoFormatError",
    "config_from_options",
    "config_to_options",
    "find_weights",
    "load_bilm",
    "load_bilm_dir",
    "load_weights",
    "read_options",
    "read_softmax",
    "save_bilm",
    "write_options",
    "write_softmax",
]
