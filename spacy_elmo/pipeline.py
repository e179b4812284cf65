"""The `elmo` pipeline component: runs the biLM once per batch, sets Doc extensions and
feeds the ELMo listeners of downstream components (spaCy's ListenedToComponent protocol).

The stored extensions live in doc.user_data as numpy arrays: pickling a Doc keeps them,
Doc.to_bytes keeps them, and a DocBin keeps them only with store_user_data=True (the
default DocBin drops them; rerun the pipeline instead). token._.elmo and span._.elmo are
getters over doc._.elmo and are never stored.
"""

from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, Token
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer
from thinc.types import Floats1d, Floats2d

from .layers import DocLayers, ElmoListener, bilm_requirement, get_bilm, mix_layers
from .layers.sequences import sequence_ranges, stale_vectors_error

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy-elmo.ElmoBiLM.v1"
bilm = null
options_file = null
weight_file = null
preset = null
max_sequence_length = 256
max_batch_tokens = 4096
cache_mb = 256
inference_matmul = "fp32"
save_weights = true
"""
DEFAULT_MODEL = Config().from_str(DEFAULT_MODEL_CONFIG)["model"]


@Language.factory(
    "elmo",
    assigns=["doc._.elmo", "doc._.elmo_layers", "doc._.elmo_sequences"],
    default_config={
        "model": DEFAULT_MODEL,
        "layer_weights": None,
        "gamma": 1.0,
        "layer_norm": False,
        "store_layers": True,
        "set_doc_tensor": False,
    },
)
def make_elmo(
    nlp: Language,
    name: str,
    model: Model[List[Doc], List[DocLayers]],
    layer_weights: Optional[List[float]],
    gamma: float,
    layer_norm: bool,
    store_layers: bool,
    set_doc_tensor: bool,
) -> "Elmo":
    """ELMo for spaCy. ``model`` is a spacy-elmo.ElmoBiLM.v1 block (options_file and
    weight_file of a published model). ``layer_weights``, ``gamma`` and ``layer_norm`` set
    the component's own mix in doc._.elmo (default: equal weights); ``store_layers`` keeps
    all layers in doc._.elmo_layers (needed by listeners); ``set_doc_tensor`` also writes
    doc._.elmo to doc.tensor for spaCy's own Tok2VecListener. A biLM package saved by name
    (``save_weights = false``) becomes one of the pipeline's requirements (nlp.meta)."""
    requirement = bilm_requirement(model)
    if requirement is not None:
        package = requirement.split("==")[0]
        others = [r for r in nlp.meta.get("requirements", []) if r.split("==")[0] != package]
        nlp.meta["requirements"] = [*others, requirement]
    return Elmo(
        nlp.vocab,
        model,
        name,
        layer_weights=layer_weights,
        gamma=gamma,
        layer_norm=layer_norm,
        store_layers=store_layers,
        set_doc_tensor=set_doc_tensor,
    )


def install_extensions() -> None:
    """doc._.elmo_layers, doc._.elmo, doc._.elmo_sequences, token._.elmo, span._.elmo."""
    for name in ("elmo_layers", "elmo", "elmo_sequences"):
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)
    if not Token.has_extension("elmo"):
        Token.set_extension("elmo", getter=_token_elmo)
    if not Span.has_extension("elmo"):
        Span.set_extension("elmo", getter=_span_elmo)


def _doc_vectors(doc: Doc) -> Optional[Floats2d]:
    vectors = doc._.elmo
    if vectors is not None and len(vectors) != len(doc):
        raise stale_vectors_error(doc, len(vectors), "elmo")
    return vectors


def _token_elmo(token: Token) -> Optional[Floats1d]:
    vectors = _doc_vectors(token.doc)
    return None if vectors is None else vectors[token.i]


def _span_elmo(span: Span) -> Optional[Floats1d]:
    vectors = _doc_vectors(span.doc)
    if vectors is None:
        return None
    if len(span) == 0:
        return numpy.zeros(vectors.shape[1], dtype="float32")
    return vectors[span.start : span.end].mean(axis=0)


class Elmo(TrainablePipe):
    """Run the biLM and set doc._.elmo_layers (n_layers, len(doc), 2 x projection_dim, float32
    numpy on CPU), doc._.elmo (the component's mix) and doc._.elmo_sequences (the token ranges
    run as one biLM sequence each). During training, ElmoListener layers of later components
    receive the batch's layers; the biLM runs once per batch whatever their number, and only
    receives gradients from listeners with grad_factor > 0.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model[List[Doc], List[DocLayers]],
        name: str = "elmo",
        *,
        layer_weights: Optional[List[float]] = None,
        gamma: float = 1.0,
        layer_norm: bool = False,
        store_layers: bool = True,
        set_doc_tensor: bool = False,
    ) -> None:
        install_extensions()
        self.vocab = vocab
        self.model = model
        self.name = name
        self.listener_map: Dict[str, List[ElmoListener]] = {}
        self.cfg = {
            "layer_weights": layer_weights,
            "gamma": gamma,
            "layer_norm": layer_norm,
            "store_layers": store_layers,
            "set_doc_tensor": set_doc_tensor,
        }

    # ListenedToComponent protocol, as in spaCy's Tok2Vec.

    @property
    def listeners(self) -> List[ElmoListener]:
        return [m for c in self.listening_components for m in self.listener_map[c]]

    @property
    def listening_components(self) -> List[str]:
        return list(self.listener_map.keys())

    def add_listener(self, listener: ElmoListener, component_name: str) -> None:
        if not self.cfg["store_layers"]:
            raise ValueError(
                f"Component '{component_name}' listens to '{self.name}', which has store_layers = false; "
                "listeners read doc._.elmo_layers when predicting. Set store_layers = true."
            )
        self.listener_map.setdefault(component_name, [])
        if listener not in self.listener_map[component_name]:
            self.listener_map[component_name].append(listener)
        self._size_listener(listener)

    def remove_listener(self, listener: ElmoListener, component_name: str) -> bool:
        if listener in self.listener_map.get(component_name, []):
            self.listener_map[component_name].remove(listener)
            if not self.listener_map[component_name]:
                del self.listener_map[component_name]
            return True
        return False

    def find_listeners(self, component) -> None:
        """Add the ElmoListener layers of ``component`` whose upstream is '*' or this name."""
        if isinstance(getattr(component, "model", None), Model):
            for node in component.model.walk():
                if isinstance(node, ElmoListener) and node.upstream_name in ("*", self.name):
                    self.add_listener(node, component.name)

    def _size_listener(self, listener: ElmoListener) -> None:
        bilm = get_bilm(self.model)
        if bilm is not None:
            listener.set_bilm_sizes(bilm.config.n_output_layers, bilm.config.output_dim)

    # Prediction.

    def predict(self, docs: Iterable[Doc]) -> List[DocLayers]:
        return self.model.predict(list(docs))

    def set_annotations(self, docs: Sequence[Doc], outputs: List[DocLayers]) -> None:
        max_length = self.model.attrs["max_sequence_length"]
        for doc, output in zip(docs, outputs):
            layers = self.model.ops.to_numpy(output.layers).astype("float32", copy=False)
            doc_layers = DocLayers(layers, self.model.ops.to_numpy(output.segments))
            vectors = mix_layers(
                numpy, doc_layers, self._layer_weights(layers.shape[0]), self.cfg["gamma"], self.cfg["layer_norm"]
            )
            doc._.elmo_sequences = sequence_ranges(doc, max_length)
            doc._.elmo = vectors.astype("float32", copy=False)
            doc._.elmo_layers = layers if self.cfg["store_layers"] else None
            if self.cfg["set_doc_tensor"]:
                doc.tensor = doc._.elmo

    def _layer_weights(self, n_layers: int) -> Floats1d:
        weights = self.cfg["layer_weights"]
        if weights is None:
            return numpy.full(n_layers, 1.0 / n_layers, dtype="float32")
        if len(weights) != n_layers:
            raise ValueError(
                f"'{self.name}' has layer_weights {weights} ({len(weights)} values) but the biLM has "
                f"{n_layers} layers; give one weight per layer, e.g. {[round(1 / n_layers, 3)] * n_layers}."
            )
        return numpy.asarray(weights, dtype="float32")

    # Training.

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Run the biLM on the batch and hand its layers to every listener. Frozen (no
        listener with grad_factor > 0): a prediction, served from the feature cache where
        it can be. Otherwise the listeners' gradients are summed and the last trainable
        listener's backprop call runs the biLM's backward pass."""
        if losses is None:
            losses = {}
        validate_examples(examples, "Elmo.update")
        docs = [eg.predicted for eg in examples]
        losses.setdefault(self.name, 0.0)
        batch_id = ElmoListener.get_batch_id(docs)
        trainable = [listener for listener in self.listeners if listener.grad_factor > 0]
        if not trainable:
            outputs = self.model.predict(docs)
            for listener in self.listeners:
                listener.receive(batch_id, outputs, None)
            return losses
        outputs, backprop_bilm = self.model.begin_update(docs)
        d_layers = [self.model.ops.alloc3f(*output.layers.shape) for output in outputs]

        def accumulate_gradient(one_d_layers: List[Floats2d]) -> None:
            for i, d in enumerate(one_d_layers):
                d_layers[i] += d
                losses[self.name] += float((d**2).sum())

        def backprop(one_d_layers: List[Floats2d]) -> None:
            accumulate_gradient(one_d_layers)
            backprop_bilm(d_layers)
            if sgd is not None:
                self.finish_update(sgd)

        for listener in self.listeners:
            if listener is trainable[-1]:
                listener.receive(batch_id, outputs, backprop)
            elif any(listener is t for t in trainable):
                listener.receive(batch_id, outputs, accumulate_gradient)
            else:
                listener.receive(batch_id, outputs, None)
        return losses

    def get_loss(self, examples: Iterable[Example], scores) -> None:
        pass

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Load the biLM (reads options_file/weight_file once; afterwards the weights live in
        the pipeline) and tell the listeners its size."""
        validate_get_examples(get_examples, "Elmo.initialize")
        self.model.initialize(X=[eg.x for eg in islice(get_examples(), 10)])
        for listener in self.listeners:
            self._size_listener(listener)

    def add_label(self, label: str) -> int:
        raise NotImplementedError(f"The '{self.name}' component has no labels.")
