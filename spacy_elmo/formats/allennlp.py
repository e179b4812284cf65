"""The published ELMo format (bilm-tf / AllenNLP): options.json + weights.hdf5.

This is the only module that knows the options.json and hdf5 key names (the biLM's weights,
and the softmax of pretraining in elmo_softmax_weights.hdf5's layout). TF stores dense kernels as
(in, out) and convolutions as (1, width, in, out); the torch modules hold (out, in).
"""

import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple, Union

import h5py
import numpy
import torch

from ..atomic import atomic_write
from ..model.bilm import BiLM
from ..model.config import BiLMConfig

PathLike = Union[str, Path]


class ElmoFormatError(ValueError):
    """An options or weight file that is missing, unreadable or does not fit the model."""


def config_to_options(config: BiLMConfig) -> Dict[str, Any]:
    """The options.json dictionary of ``config`` in the bilm-tf layout."""
    return {
        "lstm": {
            "dim": config.lstm_dim,
            "projection_dim": config.projection_dim,
            "n_layers": config.n_layers,
            "cell_clip": config.cell_clip,
            "proj_clip": config.proj_clip,
            "use_skip_connections": config.use_skip_connections,
        },
        "char_cnn": {
            "embedding": {"dim": config.char_embedding_dim},
            "filters": [list(f) for f in config.filters],
            "n_highway": config.n_highway,
            "n_characters": config.n_characters,
            "max_characters_per_token": config.max_characters_per_token,
            "activation": config.activation,
        },
    }


def config_from_options(options: Dict[str, Any], source: str = "options") -> BiLMConfig:
    """The BiLMConfig of a bilm-tf/AllenNLP options.json dictionary; ``source`` names it in errors."""
    try:
        lstm, cnn = options["lstm"], options["char_cnn"]
        kwargs = dict(
            char_embedding_dim=cnn["embedding"]["dim"],
            filters=cnn["filters"],
            n_highway=cnn["n_highway"],
            activation=cnn.get("activation", "relu"),
            max_characters_per_token=cnn.get("max_characters_per_token", 50),
            n_characters=cnn.get("n_characters", 262),
            lstm_dim=lstm["dim"],
            projection_dim=lstm["projection_dim"],
            n_layers=lstm.get("n_layers", 2),
            cell_clip=lstm.get("cell_clip"),
            proj_clip=lstm.get("proj_clip"),
            use_skip_connections=lstm.get("use_skip_connections", False),
        )
    except (KeyError, TypeError) as err:
        raise ValueError(
            f"{source} is not an ELMo options file: missing or malformed key {err}. Expected "
            "{'lstm': {'dim', 'projection_dim', ...}, 'char_cnn': {'embedding': {'dim'}, 'filters', 'n_highway', ...}}."
        ) from None
    try:
        return BiLMConfig(**kwargs)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{source}: {err}") from None


def read_options(options_file: PathLike) -> BiLMConfig:
    path = _existing(options_file, "options file")
    try:
        options = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ElmoFormatError(f"Options file {path} is not valid JSON ({err}); expected ELMo's options.json.") from None
    if not isinstance(options, dict):
        raise ElmoFormatError(f"Options file {path} holds a JSON {type(options).__name__}, expected an object.")
    try:
        return config_from_options(options, source=f"Options file {path}")
    except ValueError as err:
        raise ElmoFormatError(str(err)) from None


def write_options(config: BiLMConfig, options_file: PathLike) -> None:
    atomic_write(
        Path(options_file), lambda tmp: Path(tmp).write_text(json.dumps(config_to_options(config), indent=2) + "\n")
    )


def load_bilm(options_file: PathLike, weight_file: PathLike) -> BiLM:
    """A BiLM built from options.json with the weights of weights.hdf5."""
    model = BiLM(read_options(options_file))
    load_weights(model, weight_file)
    return model


OPTIONS = "options.json"
_BILM_GROUPS = ("CNN/", "CNN_high_", "CNN_proj/", "RNN_", "char_embed")  # datasets of the biLM itself
WEIGHT_FILES = ("weights.hdf5", "lm_weights.hdf5")  # as written here, and as published


def find_weights(folder: PathLike) -> Path:
    """The weight file of a biLM folder: weights.hdf5, or the published lm_weights.hdf5."""
    folder = Path(folder)
    if not (folder / OPTIONS).is_file():
        raise FileNotFoundError(
            f"{folder} is not a biLM folder: it has no {OPTIONS}. Pass a folder with {OPTIONS} and {' or '.join(WEIGHT_FILES)}."
        )
    for name in WEIGHT_FILES:
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{folder} has {OPTIONS} but no weight file: expected {' or '.join(WEIGHT_FILES)}.")


def load_bilm_dir(folder: PathLike) -> BiLM:
    """The BiLM of a folder holding options.json and weights.hdf5 (or lm_weights.hdf5)."""
    return load_bilm(Path(folder) / OPTIONS, find_weights(folder))


def load_weights(model: BiLM, weight_file: PathLike) -> None:
    """Copy every biLM weight from a bilm-tf hdf5 file into ``model`` (shapes checked first)."""
    path = _existing(weight_file, "weight file")
    arrays: Dict[str, numpy.ndarray] = {}
    try:
        with h5py.File(path, "r") as f:
            keys = [key for key, _ in _parameter_map(model)]
            missing = [key for key in keys if key not in f]
            if missing:
                raise ElmoFormatError(
                    f"Weight file {path} is not an ELMo biLM for these options: {len(missing)} expected "
                    f"dataset(s) missing, first {missing[:3]}. Use the weight file that belongs to the options file."
                )
            stored: List[str] = []
            f.visititems(lambda name, item: stored.append(name) if isinstance(item, h5py.Dataset) else None)
            extra = sorted(name for name in set(stored) - set(keys) if name.startswith(_BILM_GROUPS))
            if extra:
                raise ElmoFormatError(
                    f"Weight file {path} holds {len(extra)} biLM dataset(s) that the options do not describe, first "
                    f"{extra[:3]}: the options give fewer filters, highway or LSTM layers than the weights have. "
                    "Use the options file that belongs to the weight file."
                )
            for key, param in _parameter_map(model):
                expected = _stored_shape(key, param)
                got = f[key].shape
                if got != expected:
                    raise ElmoFormatError(
                        f"Weight file {path}: dataset {key} has shape {got}, but the options give {expected}. "
                        "The options file does not describe this weight file."
                    )
                arrays[key] = numpy.asarray(f[key][...], dtype=numpy.float32)
    except OSError as err:
        raise ElmoFormatError(
            f"Weight file {path} could not be read as HDF5 ({err}); is it truncated or not an hdf5 file?"
        ) from None
    with torch.no_grad():
        for key, param in _parameter_map(model):
            param.copy_(torch.from_numpy(_to_torch_layout(key, arrays[key])))


def save_bilm(model: BiLM, options_file: PathLike, weight_file: PathLike) -> None:
    """Write the model as options.json + weights.hdf5 (each written atomically)."""
    write_options(model.config, options_file)

    def write(tmp: str) -> None:
        with h5py.File(tmp, "w") as f:
            for key, param in _parameter_map(model):
                f.create_dataset(key, data=_to_tf_layout(key, param.detach().float().cpu().numpy()))

    atomic_write(Path(weight_file), write)


def write_softmax(weight: numpy.ndarray, bias: numpy.ndarray, path: PathLike) -> None:
    """A softmax in AllenNLP's elmo_softmax_weights.hdf5 layout: softmax/W (V, P), softmax/b (V,)."""

    def write(tmp: str) -> None:
        with h5py.File(tmp, "w") as f:
            f.create_dataset("softmax/W", data=weight)
            f.create_dataset("softmax/b", data=bias)

    atomic_write(Path(path), write)


def read_softmax(path: PathLike) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(W (V, P), b (V,)) as float32 from a softmax file in AllenNLP's layout."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"Softmax weight file not found: {path}. Pass an hdf5 file with softmax/W and softmax/b."
        )
    try:
        with h5py.File(path, "r") as f:
            if "softmax/W" not in f or "softmax/b" not in f:
                raise ElmoFormatError(
                    f"Softmax weight file {path} lacks softmax/W or softmax/b; expected elmo_softmax_weights.hdf5's layout."
                )
            return numpy.asarray(f["softmax/W"], dtype=numpy.float32), numpy.asarray(
                f["softmax/b"], dtype=numpy.float32
            )
    except OSError as err:
        raise ElmoFormatError(f"Softmax weight file {path} could not be read as HDF5 ({err}).") from None


def _parameter_map(model: BiLM) -> Iterator[Tuple[str, torch.Tensor]]:
    """(hdf5 key, tensor view in the torch layout) for every stored weight."""
    enc = model.char_encoder
    yield "char_embed", enc.char_embedding.weight[1:]
    for i, conv in enumerate(enc.convolutions):
        yield f"CNN/W_cnn_{i}", conv.weight
        yield f"CNN/b_cnn_{i}", conv.bias
    for k, hw in enumerate(enc.highways):
        yield f"CNN_high_{k}/W_carry", hw.carry.weight
        yield f"CNN_high_{k}/b_carry", hw.carry.bias
        yield f"CNN_high_{k}/W_transform", hw.transform.weight
        yield f"CNN_high_{k}/b_transform", hw.transform.bias
    yield "CNN_proj/W_proj", enc.projection.weight
    yield "CNN_proj/b_proj", enc.projection.bias
    lstm = model.lstm
    for d in range(2):
        for layer in range(model.config.n_layers):
            prefix = f"RNN_{d}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"
            yield f"{prefix}/W_0", _LstmKernel(lstm.input_weights[layer][d], lstm.hidden_weights[layer][d])
            yield f"{prefix}/B", lstm.biases[layer][d]
            yield f"{prefix}/W_P_0", lstm.projections[layer][d]


class _LstmKernel:
    """TF's W_0 = [input kernel; hidden kernel] stacked on the input axis, over two tensors."""

    def __init__(self, input_part: torch.Tensor, hidden_part: torch.Tensor):
        self.parts = (input_part, hidden_part)
        self.shape = torch.Size([input_part.shape[0] + hidden_part.shape[0], input_part.shape[1]])

    def copy_(self, value: torch.Tensor) -> None:
        n = self.parts[0].shape[0]
        self.parts[0].copy_(value[:n])
        self.parts[1].copy_(value[n:])

    def detach(self) -> torch.Tensor:
        return torch.cat([p.detach() for p in self.parts])


def _is_dense(key: str) -> bool:
    return key.rsplit("/", 1)[-1] in ("W_carry", "W_transform", "W_proj")


def _stored_shape(key: str, param) -> Tuple[int, ...]:
    shape = tuple(param.shape)
    if key.startswith("CNN/W_cnn_"):
        n, dim, width = shape
        return (1, width, dim, n)
    if _is_dense(key):
        return shape[::-1]
    return shape


def _to_torch_layout(key: str, array: numpy.ndarray) -> numpy.ndarray:
    if key.startswith("CNN/W_cnn_"):
        return numpy.ascontiguousarray(array[0].transpose(2, 1, 0))
    if _is_dense(key):
        return numpy.ascontiguousarray(array.T)
    return array


def _to_tf_layout(key: str, array: numpy.ndarray) -> numpy.ndarray:
    if key.startswith("CNN/W_cnn_"):
        return numpy.ascontiguousarray(array.transpose(2, 1, 0)[None])
    if _is_dense(key):
        return numpy.ascontiguousarray(array.T)
    return array


def _existing(path: PathLike, what: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"ELMo {what} not found: {path}. Pass the path of an existing file.")
    if path.is_dir():
        raise ElmoFormatError(f"ELMo {what} {path} is a directory; pass the file inside it.")
    return path
