"""`spacy-elmo.ElmoListener.v1`: a task's own ELMo vector from the shared `elmo` component.

Each listener mixes the biLM layers with its own trainable weights (ELMo's task-specific
s_j and gamma). With grad_factor 0 (the default) the biLM is frozen: the listener never
sends gradients upstream. `spacy-elmo.ElmoEmbed.v1` is the same head over a private copy
of the biLM, what ``nlp.replace_listeners`` puts in a listener's place.
"""

from typing import Callable, Dict, Iterable, List, Optional, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
from thinc.types import Floats2d, Floats3d

from .mix import ScalarMixLayer
from .sequences import DocLayers, segment_ids, stale_vectors_error


class ElmoListener(Model):
    """Receives the `elmo` component's layers for a training batch (or reads them from
    ``doc._.elmo_layers`` when predicting) and applies its own mix and dropout."""

    name = "elmo-listener"

    def __init__(self, upstream_name: str, head: Model, grad_factor: float) -> None:
        Model.__init__(
            self,
            name=self.name,
            forward=_listener_forward,
            init=_listener_init,
            layers=[head],
            dims={"nO": None},
            attrs={"grad_factor": grad_factor},
        )
        self.upstream_name = upstream_name
        self._batch_id: Optional[int] = None
        self._outputs: Optional[List[DocLayers]] = None
        self._backprop: Optional[Callable] = None

    @property
    def grad_factor(self) -> float:
        return self.attrs["grad_factor"]

    @property
    def mix(self) -> Model:
        return self.layers[0].get_ref("mix")

    @classmethod
    def get_batch_id(cls, docs: Iterable[Doc]) -> int:
        """A content hash of a batch, to check that the listener got the batch it is run on."""
        return sum(sum(token.orth for token in doc) for doc in docs)

    def receive(self, batch_id: int, outputs: List[DocLayers], backprop: Optional[Callable]) -> None:
        """Store the upstream layers of a training batch and the callback for their gradient."""
        self._batch_id = batch_id
        self._outputs = outputs
        self._backprop = backprop

    def release(self, batch_id: int) -> None:
        """Drop the stored layers and callback of batch ``batch_id`` once its backprop ran
        (as spacy-transformers' listener does), so they are not kept until the next batch."""
        if self._batch_id == batch_id:
            self._batch_id, self._outputs, self._backprop = None, None, None

    def set_bilm_sizes(self, n_layers: int, width: int) -> None:
        """Called by the upstream component once its biLM is loaded."""
        for node, dim, value in ((self, "nO", width), (self.mix, "nL", n_layers)):
            if node.has_dim(dim) and node.get_dim(dim) != value:
                raise ValueError(
                    f"ElmoListener was built for a biLM with {dim}={node.get_dim(dim)}, but the upstream "
                    f"'elmo' component has {dim}={value}. Re-initialize the listening component."
                )
            node.set_dim(dim, value)


@registry.architectures("spacy-elmo.ElmoListener.v1")
def ElmoListenerV1(
    upstream: str = "*",
    grad_factor: float = 0.0,
    gamma: float = 1.0,
    layer_norm: bool = False,
    dropout: float = 0.0,
    l2_coef: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """A task's ELMo vectors (len(doc), 2 x projection_dim) from the shared `elmo` component.

    upstream: name of the `elmo` component to listen to, "*" for any.
    grad_factor: scale of the gradient sent into the biLM; 0 keeps it frozen.
    gamma: initial scale of the mix. layer_norm: normalise each layer per sentence first.
    dropout: dropout on the mixed vectors, this rate whatever [training] dropout is.
    l2_coef: L2 penalty on the mix weights.
    """
    return ElmoListener(upstream, _head(gamma, layer_norm, dropout, l2_coef, grad_factor), grad_factor)


@registry.architectures("spacy-elmo.ElmoEmbed.v1")
def ElmoEmbed(
    bilm: Model[List[Doc], List[DocLayers]],
    grad_factor: float = 0.0,
    gamma: float = 1.0,
    layer_norm: bool = False,
    dropout: float = 0.0,
    l2_coef: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """A listener's head over its own biLM (no shared `elmo` component)."""
    return _standalone(bilm, _head(gamma, layer_norm, dropout, l2_coef, grad_factor), grad_factor)


def replace_listener(bilm_layer: Model, listener: ElmoListener, component) -> Model:
    """For ``nlp.replace_listeners``: the listener's trained head over a copy of the biLM."""
    return _standalone(bilm_layer, listener.layers[0], listener.grad_factor)


def replace_listener_cfg(bilm_config: Dict, tok2vec_config: Dict) -> Dict:
    """For ``nlp.replace_listeners``: the ElmoEmbed.v1 config that replaces a listener's.
    ``tok2vec_config`` is the component's ``model.tok2vec`` block: the listener itself or
    an ElmoTok2Vec.v1 block holding it under ``elmo``."""
    listener_config = tok2vec_config
    if listener_config.get("@architectures") != "spacy-elmo.ElmoListener.v1":
        listener_config = tok2vec_config.get("elmo", {})
    settings = {k: v for k, v in listener_config.items() if k not in ("@architectures", "upstream")}
    return {"@architectures": "spacy-elmo.ElmoEmbed.v1", "bilm": bilm_config, **settings}


def _head(gamma: float, layer_norm: bool, dropout: float, l2_coef: float, grad_factor: float) -> Model:
    mix = ScalarMixLayer(gamma=gamma, layer_norm=layer_norm, l2_coef=l2_coef)
    mix.attrs["need_input_grad"] = grad_factor > 0
    head = chain(mix, _own_dropout(dropout))
    head.set_ref("mix", mix)
    return head


def _standalone(bilm_layer: Model, head: Model, grad_factor: float) -> Model:
    model = chain(_with_grad_factor(bilm_layer, grad_factor), head)
    model.set_ref("mix", head.get_ref("mix"))
    return model


def _with_grad_factor(bilm_layer: Model, grad_factor: float) -> Model:
    return Model(
        "elmo_grad_factor",
        _grad_factor_forward,
        init=_grad_factor_init,
        layers=[bilm_layer],
        attrs={"grad_factor": grad_factor},
    )


def _grad_factor_init(model: Model, X=None, Y=None) -> None:
    model.layers[0].initialize(X=X)


def _grad_factor_forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[DocLayers], Callable]:
    bilm_layer, factor = model.layers[0], model.attrs["grad_factor"]
    if not is_train or factor == 0:
        return bilm_layer.predict(docs), lambda d_layers: []
    outputs, backprop_bilm = bilm_layer(docs, is_train)

    def backprop(d_layers: List[Floats3d]) -> List[Doc]:
        return backprop_bilm([d * factor for d in d_layers])

    return outputs, backprop


def _listener_init(model: ElmoListener, X: Optional[List[Doc]] = None, Y=None) -> None:
    if not model.has_dim("nO") or not model.mix.has_dim("nL"):
        raise ValueError(
            "ElmoListener does not know the biLM's size yet. Put the 'elmo' component before the "
            "components that listen to it and initialize the pipeline (nlp.initialize())."
        )
    model.layers[0].initialize()


def _listener_forward(model: ElmoListener, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    upstream_backprop = None
    batch_id = None
    if is_train and model._batch_id is not None:
        batch_id = model.get_batch_id(docs)
        if batch_id != model._batch_id:
            raise ValueError(
                f"ElmoListener got a batch (id {batch_id}) other than the one the 'elmo' component "
                f"last ran on (id {model._batch_id}); the elmo component must run on the same batch first."
            )
        inputs, upstream_backprop = model._outputs, model._backprop
    else:
        inputs = [_layers_from_doc(model, doc, is_train) for doc in docs]
    vectors, backprop_head = model.layers[0](inputs, is_train)

    def backprop(d_vectors: List[Floats2d]) -> List[Doc]:
        d_layers = backprop_head(d_vectors)
        if d_layers is not None and upstream_backprop is not None:
            upstream_backprop([d * model.grad_factor for d in d_layers])
        if batch_id is not None:
            model.release(batch_id)
        return []

    return vectors, backprop


def _layers_from_doc(model: ElmoListener, doc: Doc, is_train: bool) -> DocLayers:
    layers = doc._.get("elmo_layers") if Doc.has_extension("elmo_layers") else None
    if layers is not None:
        if layers.shape[1] != len(doc):
            raise stale_vectors_error(doc, layers.shape[1], "elmo_layers")
        return DocLayers(model.ops.asarray3f(layers), model.ops.asarray_i(segment_ids(doc, doc._.elmo_sequences)))
    if is_train and len(doc):
        raise ValueError(
            "ElmoListener found no ELMo layers for a training Doc: the 'elmo' component did not run on it and "
            "doc._.elmo_layers is empty. Keep 'elmo' in the pipeline before its listeners (or make it an annotating "
            "component if it is frozen), with store_layers = true."
        )
    # Right shape, no information: what spaCy's Tok2VecListener does before the upstream ran.
    n_layers, width = model.mix.get_dim("nL"), model.get_dim("nO")
    return DocLayers(model.ops.alloc3f(n_layers, len(doc), width), model.ops.asarray_i([-1] * len(doc)))


def _own_dropout(rate: float) -> Model[List[Floats2d], List[Floats2d]]:
    """Dropout at the listener's own rate. thinc's Dropout keeps its rate in the attr
    "dropout_rate", which spaCy's update overwrites with [training] dropout in every layer
    of a component's model; this rate is kept under another name, so it is the one used."""
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"The ELMo listener's dropout must be in [0, 1), not {rate}.")
    return Model("elmo_dropout", _own_dropout_forward, attrs={"elmo_dropout_rate": rate})


def _own_dropout_forward(
    model: Model, arrays: List[Floats2d], is_train: bool
) -> Tuple[List[Floats2d], Callable[[List[Floats2d]], List[Floats2d]]]:
    rate = model.attrs["elmo_dropout_rate"]
    if not is_train or rate == 0.0:
        return arrays, lambda d_arrays: d_arrays
    masks = [model.ops.get_dropout_mask(a.shape, rate) for a in arrays]
    return [a * m for a, m in zip(arrays, masks)], lambda d_arrays: [d * m for d, m in zip(d_arrays, masks)]
