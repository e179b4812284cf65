"""`spacy-elmo.ElmoBiLM.v1`: the biLM as a thinc layer, Docs in, all layers per Doc out."""

import hashlib
import os
import threading
import warnings
from io import BytesIO
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy
import srsly
import torch
from confection import ConfigValidationError
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, Optimizer, PyTorchShim, xp2torch
from thinc.layers.pytorchwrapper import convert_pytorch_default_outputs
from thinc.layers.pytorchwrapper import forward as pytorch_forward
from thinc.types import Floats3d
from torch import nn

from ..chars import CharacterIds
from ..formats.allennlp import OPTIONS, find_weights, load_bilm, load_bilm_dir, read_options
from ..formats.packages import DEFAULT_BILM, BiLMNotFound, bilm_folder, default_bilm_folder, read_meta
from ..model import BiLM, BiLMConfig
from ..model import preset as get_preset
from ..model.fast import FastBiLM
from ..threads import process_governor
from .cache import FeatureCache
from .listener import replace_listener, replace_listener_cfg
from .sequences import BiLMSequence, DocLayers, batch_by_tokens, doc_sequences, segment_ids, sequence_ranges

INFERENCE_MATMUL: Dict[str, Optional[torch.dtype]] = {"fp32": None, "bf16": torch.bfloat16}


class BiLMHolder(nn.Module):
    """The torch module inside the thinc wrapper; the BiLM is set when it is loaded or
    deserialised, so building a pipeline from its config never reads weight files.

    Each process runs its own FastBiLM (built on its first prediction there); in a worker of
    ``nlp.pipe(n_process=N)`` torch runs one thread."""

    def __init__(self, inference_matmul: str = "fp32") -> None:
        super().__init__()
        self.bilm: Optional[BiLM] = None
        # With save_weights = false: the biLM package's name, version and weights checksum,
        # saved instead of the weights.
        self.package: Optional[Dict[str, str]] = None
        self.matmul_dtype = INFERENCE_MATMUL[inference_matmul]
        self._fast: List[FastBiLM] = []  # a list, so it is no submodule and never serialised
        self._fast_pid = os.getpid()

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        if self.bilm is None:
            raise ValueError(
                "The ELMo biLM has no weights yet: call nlp.initialize() (or load a saved pipeline) first."
            )
        if torch.is_grad_enabled():
            return self.bilm(char_ids).layers
        if not self._fast or self._fast[0].bilm is not self.bilm:
            self._fast = [FastBiLM(self.bilm, matmul_dtype=self.matmul_dtype)]
        return self._fast[0](char_ids).layers

    def enter_process(self) -> None:
        """Called on every batch: in a process other than the last one seen (a worker of
        ``nlp.pipe(n_process=N)``), start a fresh FastBiLM and run torch on one thread, so
        that the workers share the cores instead of each starting a thread per core; then
        let the process's ThreadGovernor lower torch's threads to the cores other processes
        leave free."""
        if self._fast_pid != os.getpid():
            self._fast, self._fast_pid = [], os.getpid()
            torch.set_num_threads(1)
        process_governor().update()

    def __getstate__(self) -> Dict:
        """Pickled (spaCy's workers under the spawn or forkserver start method): without the
        fast path's caches and scratch memory."""
        state = dict(self.__dict__)
        # A copy in this process (thinc's Shim.copy, nlp.replace_listeners) keeps torch's threads;
        # unpickled in another process, enter_process sees a new pid.
        state["_fast"], state["_fast_pid"] = [], os.getpid()
        return state


class BiLMShim(PyTorchShim):
    """thinc's PyTorchShim for a BiLMHolder. Its optimizer step writes the new weights
    through numpy views of the parameters, which torch does not see, so it marks the
    biLM's weights as changed: every cache of derived values recomputes."""

    def finish_update(self, optimizer: Optimizer) -> None:
        bilm = self._model.bilm
        updated = any(p.grad is not None for p in self._model.parameters())
        super().finish_update(optimizer)
        if updated and bilm is not None:
            bilm.mark_weights_changed()


@registry.architectures("spacy-elmo.ElmoBiLM.v1")
def ElmoBiLM(
    bilm: Optional[str] = None,
    options_file: Optional[str] = None,
    weight_file: Optional[str] = None,
    preset: Optional[str] = None,
    max_sequence_length: int = 256,
    max_batch_tokens: int = 4096,
    cache_mb: float = 256.0,
    inference_matmul: str = "fp32",
    save_weights: bool = True,
) -> Model[List[Doc], List[DocLayers]]:
    """The ELMo biLM over a batch of Docs.

    bilm: the name of an installed biLM package (`package-bilm`) or a biLM folder
        (options.json + weights.hdf5). With none of bilm, options_file and preset given, the
        installed default English biLM.
    options_file, weight_file: a published model (bilm-tf/AllenNLP options.json + hdf5);
        options_file without weight_file gives a freshly initialised model of those sizes.
    preset: instead of options_file, the sizes of a fresh model ("tiny", "small", ...).
    max_sequence_length: longest biLM sequence; longer sentences (or sentence-less Docs)
        are cut into windows of this many tokens.
    max_batch_tokens: bound on batch size x padded length of one biLM call.
    cache_mb: size of the feature cache used when no gradient is needed (0 turns it off).
    inference_matmul: "fp32", or "bf16" to run the LSTM's matmuls in bf16 when no gradient is
        needed (~2x faster on CPUs with AMX and on GPUs, outputs within ~1e-3 of fp32).
    save_weights: false saves a biLM package's name, version and weights checksum instead of
        its weights, and lists the package in the pipeline's requirements (`spacy package`
        makes it an install requirement); loading then reads the installed package. Only for
        a biLM given as a package (bilm = NAME, or the default), and only while its weights
        are unchanged (not with grad_factor > 0).
    The files are read by model.initialize(); afterwards the weights live in the model.
    """
    given = {"bilm": bilm, "options_file": options_file, "preset": preset}
    if sum(value is not None for value in given.values()) > 1:
        named = ", ".join(f"{key}={value!r}" for key, value in given.items() if value is not None)
        raise _config_error(
            f"it got {named}; give one (a biLM package or folder, a biLM's files, or a fresh model's sizes)."
        )
    if weight_file is not None and options_file is None:
        raise _config_error(
            f"it got weight_file={weight_file!r} without options_file; pass the options.json that belongs to it."
        )
    if not save_weights and (options_file is not None or preset is not None or _is_folder(bilm)):
        raise _config_error(
            "save_weights = false needs the biLM as an installed package (model.bilm = NAME, or the default): "
            "the weights of a folder, files or a preset are saved with the pipeline."
        )
    if inference_matmul not in INFERENCE_MATMUL:
        raise ValueError(f"inference_matmul must be one of {sorted(INFERENCE_MATMUL)}, got {inference_matmul!r}.")
    if max_batch_tokens < max_sequence_length:
        raise ValueError(
            f"max_batch_tokens ({max_batch_tokens}) must be at least max_sequence_length ({max_sequence_length})."
        )
    shim = BiLMShim(
        BiLMHolder(inference_matmul), serialize_model=_serialize_holder, deserialize_model=_deserialize_holder
    )
    torch_layer = Model(
        "pytorch",
        pytorch_forward,  # thinc's PyTorchWrapper_v3, with the shim above
        attrs={"convert_inputs": _char_ids_to_torch, "convert_outputs": convert_pytorch_default_outputs},
        shims=[shim],
        dims={"nI": None, "nO": None},
    )
    return Model(
        "elmo_bilm",
        _forward,
        init=_init,
        layers=[torch_layer],
        attrs={
            "bilm": None if bilm is None else str(bilm),
            "options_file": None if options_file is None else str(options_file),
            "weight_file": None if weight_file is None else str(weight_file),
            "preset": preset,
            "max_sequence_length": max_sequence_length,
            "max_batch_tokens": max_batch_tokens,
            "save_weights": save_weights,
            "feature_cache": FeatureCache(cache_mb),
            # nlp.replace_listeners: what takes a listener's place, and its config
            "replace_listener": replace_listener,
            "replace_listener_cfg": replace_listener_cfg,
        },
    )


def get_bilm(model: Model) -> Optional[BiLM]:
    """The torch BiLM inside an ElmoBiLM.v1 layer (None before initialisation)."""
    return model.layers[0].shims[0]._model.bilm


def get_feature_cache(model: Model) -> FeatureCache:
    return model.attrs["feature_cache"]


def _init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    shim = model.layers[0].shims[0]
    if shim._model.bilm is not None:
        return
    name, options_file, weight_file, preset = (
        model.attrs[key] for key in ("bilm", "options_file", "weight_file", "preset")
    )
    if options_file is None and preset is None:
        try:
            folder = default_bilm_folder() if name is None else bilm_folder(name)
        except BiLMNotFound as err:
            hint = " In the project's configs: --paths.elmo_options and --paths.elmo_weights." if name is None else ""
            raise _config_error(f"{err}{hint}") from None
        options_file, weight_file = folder / OPTIONS, find_weights(folder)
    if options_file is None:
        warnings.warn(
            f"spacy-elmo: the biLM of preset {preset!r} has random weights; its vectors mean nothing until it is trained.",
            stacklevel=2,
        )
        bilm = BiLM(get_preset(preset))
    elif weight_file is None:
        bilm = BiLM(read_options(options_file))
        warnings.warn(
            f"spacy-elmo: options_file {options_file} without weight_file gives a biLM with random weights; its "
            "vectors mean nothing until it is trained. Pass the weights as weight_file (--paths.elmo_weights).",
            stacklevel=2,
        )
    else:
        bilm = load_bilm(options_file, weight_file)
    if not model.attrs["save_weights"]:  # the biLM came from a package: folder is its folder
        version = str(read_meta(folder).get("version", ""))
        shim._model.package = {"name": _package_name(model), "version": version, "checksum": _checksum(bilm)}
    shim._model.bilm = bilm.to(shim.device)


def bilm_requirement(model: Model) -> Optional[str]:
    """The pip requirement of the biLM package that a pipeline saved with save_weights = false
    needs ("NAME==VERSION"), or None where the weights are saved (or the package is not installed)."""
    if model.attrs.get("save_weights", True):
        return None
    name = _package_name(model)
    try:
        version = read_meta(bilm_folder(name)).get("version")
    except BiLMNotFound:
        return None
    return f"{name}=={version}" if version else name


def _package_name(model: Model) -> str:
    return model.attrs["bilm"] or DEFAULT_BILM


def _is_folder(bilm: Optional[str]) -> bool:
    return bilm is not None and (Path(bilm) / OPTIONS).is_file()


def _checksum(bilm: BiLM) -> str:
    """SHA-256 of the weights (parameters in order, as float32 on CPU)."""
    digest = hashlib.sha256()
    for name, tensor in bilm.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def _config_error(problem: str) -> ConfigValidationError:
    """A ValueError that spaCy's commands print as one message (no traceback)."""
    return ConfigValidationError(title=f"spacy-elmo.ElmoBiLM.v1: {problem}", errors=[], show_config=False)


_CHARACTER_IDS: Dict[int, CharacterIds] = {}


def _character_ids(max_chars: int) -> CharacterIds:
    if max_chars not in _CHARACTER_IDS:
        _CHARACTER_IDS[max_chars] = CharacterIds(max_chars)
    return _CHARACTER_IDS[max_chars]


# One prediction at a time in a process: the fast path's scratch memory and the caches are
# shared, and torch already runs each call on every core it may use.
_PREDICTION_LOCK = threading.Lock()


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[DocLayers], Callable]:
    if is_train:
        return _run(model, docs, is_train)
    with _PREDICTION_LOCK:
        return _run(model, docs, is_train)


def _run(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[DocLayers], Callable]:
    bilm = get_bilm(model)
    if bilm is None:
        raise ValueError("The ELMo biLM has no weights yet: call nlp.initialize() (or load a saved pipeline) first.")
    model.layers[0].shims[0]._model.enter_process()
    config: BiLMConfig = bilm.config
    ops = model.ops
    max_length = model.attrs["max_sequence_length"]
    ranges = [sequence_ranges(doc, max_length) for doc in docs]
    sequences = [doc_sequences(doc, r) for doc, r in zip(docs, ranges)]
    cache = None if is_train else get_feature_cache(model)
    if cache is not None:
        cache.check_weights(bilm.weights_version)
    found: Dict[Tuple[int, int], Floats3d] = {}
    todo: List[Tuple[int, int]] = []
    for i, doc_seqs in enumerate(sequences):
        for j, seq in enumerate(doc_seqs):
            hit = cache.get(seq.words) if cache is not None and cache.max_bytes else None
            if hit is None:
                todo.append((i, j))
            else:
                found[(i, j)] = hit
    chars = _character_ids(config.max_characters_per_token)
    backprops = []
    for batch in _batches(todo, sequences, model.attrs["max_batch_tokens"]):
        batch_seqs = [sequences[i][j] for i, j in batch]
        char_ids = numpy.zeros(
            (len(batch), max(len(s.words) for s in batch_seqs), config.max_characters_per_token), dtype="int64"
        )
        for b, seq in enumerate(batch_seqs):
            char_ids[b, : len(seq.words)] = chars.sentence(seq.words)
        layers, backprop_batch = model.layers[0](char_ids, is_train)
        for b, (key, seq) in enumerate(zip(batch, batch_seqs)):
            found[key] = layers[:, b, : len(seq.words)]
            if cache is not None and cache.max_bytes:
                cache.put(seq.words, ops.xp.ascontiguousarray(found[key]))
        if is_train:
            backprops.append((batch, backprop_batch, layers.shape))
    outputs = []
    for i, (doc, doc_seqs) in enumerate(zip(docs, sequences)):
        doc_layers = ops.alloc3f(config.n_output_layers, len(doc), config.output_dim)
        for j, seq in enumerate(doc_seqs):
            doc_layers[:, ops.asarray_i(seq.positions)] = found[(i, j)]
        outputs.append(DocLayers(doc_layers, ops.asarray_i(segment_ids(doc, ranges[i]))))

    def backprop(d_layers: List[Floats3d]) -> List[Doc]:
        for batch, backprop_batch, shape in backprops:
            d_batch = ops.alloc4f(*shape)
            for b, (i, j) in enumerate(batch):
                seq = sequences[i][j]
                d_batch[:, b, : len(seq.words)] = d_layers[i][:, ops.asarray_i(seq.positions)]
            backprop_batch(d_batch)
        return docs

    return outputs, backprop


def _batches(
    keys: List[Tuple[int, int]], sequences: List[List[BiLMSequence]], max_tokens: int
) -> List[List[Tuple[int, int]]]:
    """Group sequences, longest first, so that batch size x longest length <= max_tokens."""
    lengths = [len(sequences[i][j].words) for i, j in keys]
    return [[keys[k] for k in batch] for batch in batch_by_tokens(lengths, max_tokens)]


def _char_ids_to_torch(model: Model, char_ids: numpy.ndarray, is_train: bool):
    tensor = xp2torch(char_ids, device=model.shims[0].device)
    return ArgsKwargs(args=(tensor,), kwargs={}), lambda d_inputs: None


def _serialize_holder(holder: BiLMHolder) -> bytes:
    """The BiLM's sizes and weights, so a saved pipeline needs no weight files; with
    save_weights = false its package's name, version and weights checksum instead."""
    config = None if holder.bilm is None else holder.bilm.config.to_dict()
    package = holder.package
    if package is not None and holder.bilm is not None:
        if _checksum(holder.bilm) != package["checksum"]:
            raise ValueError(
                f"The biLM's weights differ from those of the package {package['name']} {package['version']} "
                "they were loaded from (fine-tuned with grad_factor > 0?): saving only the package's name would "
                "lose them. Set save_weights = true in the elmo component's model."
            )
        return srsly.msgpack_dumps({"config": config, "package": package, "state": None})
    state = BytesIO()
    torch.save(holder.state_dict(), state)
    return srsly.msgpack_dumps({"config": config, "state": state.getvalue()})


def _deserialize_holder(holder: BiLMHolder, data: bytes, device: torch.device) -> BiLMHolder:
    msg = srsly.msgpack_loads(data)
    package = msg.get("package")
    if package is not None:
        holder.bilm = _load_package(package)
        holder.package = package
        return holder.to(device)
    if msg["config"] is not None:
        holder.bilm = BiLM(BiLMConfig(**msg["config"]))
    holder.load_state_dict(torch.load(BytesIO(msg["state"]), map_location=device))
    return holder.to(device)


def _load_package(package: Dict[str, str]) -> BiLM:
    """The biLM of an installed package, checked against the weights a pipeline was saved with."""
    wanted = f"{package['name']}=={package['version']}"
    try:
        folder = bilm_folder(package["name"])
    except BiLMNotFound:
        raise ValueError(
            f"This pipeline's elmo component needs the biLM package {wanted}, which is not installed: "
            "pip install it (pipeline packages built by `spacy package` list it as a requirement)."
        ) from None
    bilm = load_bilm_dir(folder)
    if _checksum(bilm) != package["checksum"]:
        installed = read_meta(folder).get("version", "?")
        raise ValueError(
            f"The installed biLM package {package['name']} {installed} has other weights than the {wanted} "
            f"this pipeline was saved with: pip install {wanted}."
        )
    return bilm
