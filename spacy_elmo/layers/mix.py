"""ELMo's layer mix, gamma * sum_j w_j * layer_j, on thinc arrays (numpy or cupy).

The torch ScalarMix serves the biLM code; this version works on the per-Doc outputs that
pipeline components pass around, with an explicit backward pass.
"""

from typing import Callable, List, Optional, Tuple

from thinc.api import Model
from thinc.types import Floats1d, Floats2d, Floats3d, Ints1d

from .sequences import DocLayers

EPSILON = 1e-12


def normalize_segments(xp, layers: Floats3d, segments: Ints1d) -> Tuple[Floats3d, Callable[[Floats3d], Floats3d]]:
    """Normalise each layer per biLM sequence (mean and variance over that sequence's tokens
    and all dimensions); rows of skipped tokens (segment -1) become zero."""
    out = xp.zeros_like(layers)
    stats = []
    for segment in range(int(segments.max()) + 1 if segments.size else 0):
        rows = xp.nonzero(segments == segment)[0]
        x = layers[:, rows]
        mean = x.mean(axis=(1, 2), keepdims=True)
        inv_std = 1.0 / xp.sqrt(x.var(axis=(1, 2), keepdims=True) + EPSILON)
        out[:, rows] = (x - mean) * inv_std
        stats.append((rows, inv_std))

    def backprop(d_out: Floats3d) -> Floats3d:
        d_layers = xp.zeros_like(d_out)
        for rows, inv_std in stats:
            d, y = d_out[:, rows], out[:, rows]
            d_layers[:, rows] = inv_std * (
                d - d.mean(axis=(1, 2), keepdims=True) - y * (d * y).mean(axis=(1, 2), keepdims=True)
            )
        return d_layers

    return out, backprop


def mix_layers(xp, doc_layers: DocLayers, weights: Floats1d, gamma: float, layer_norm: bool) -> Floats2d:
    """(len(doc), dim) = gamma * sum_j weights[j] * layer_j (normalised per sentence if asked)."""
    layers = doc_layers.layers
    if layer_norm:
        layers, _ = normalize_segments(xp, layers, doc_layers.segments)
    return gamma * xp.tensordot(weights.astype(layers.dtype), layers, axes=(0, 0))


def ScalarMixLayer(
    n_layers: Optional[int] = None, *, gamma: float = 1.0, layer_norm: bool = False, l2_coef: float = 0.0
) -> Model[List[DocLayers], List[Floats2d]]:
    """Trainable mix: softmax weights (initialised equal), scale gamma, optional layer norm
    per sentence, and an L2 penalty ``l2_coef * sum(s ** 2)`` on the unnormalised weights s
    (its gradient is added to theirs). Sends gradients to the layers only when the attr
    "need_input_grad" is true (set by listeners with grad_factor > 0)."""
    return Model(
        "elmo_scalar_mix",
        _mix_forward,
        init=_mix_init,
        dims={"nL": n_layers},
        params={"weights": None, "gamma": None},
        attrs={"initial_gamma": gamma, "layer_norm": layer_norm, "l2_coef": l2_coef, "need_input_grad": False},
    )


def mix_weights(model: Model) -> Floats1d:
    """The softmax-normalised weights of a ScalarMixLayer."""
    weights = model.get_param("weights")
    exp = model.ops.xp.exp(weights - weights.max())
    return exp / exp.sum()


def _mix_init(model: Model, X=None, Y=None) -> None:
    if not model.has_dim("nL") and X:
        model.set_dim("nL", X[0].layers.shape[0])
    n_layers = model.get_dim("nL")
    model.set_param("weights", model.ops.alloc1f(n_layers))
    model.set_param("gamma", model.ops.asarray1f([model.attrs["initial_gamma"]]))


def _mix_forward(model: Model, inputs: List[DocLayers], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    xp = model.ops.xp
    weights = mix_weights(model)
    gamma = model.get_param("gamma")[0]
    layer_norm = model.attrs["layer_norm"]
    normalized, outputs = [], []
    for doc_layers in inputs:
        layers, norm_backprop = (
            normalize_segments(xp, doc_layers.layers, doc_layers.segments) if layer_norm else (doc_layers.layers, None)
        )
        mixed = xp.tensordot(weights.astype(layers.dtype), layers, axes=(0, 0))
        normalized.append((layers, mixed, norm_backprop))
        outputs.append(gamma * mixed)

    def backprop(d_outputs: List[Floats2d]) -> Optional[List[Floats3d]]:
        d_weights = model.ops.alloc1f(weights.shape[0])
        d_gamma = 0.0
        d_inputs = []
        for d_out, (layers, mixed, norm_backprop) in zip(d_outputs, normalized):
            d_weights += gamma * xp.einsum("lnd,nd->l", layers, d_out)
            d_gamma += float((d_out * mixed).sum())
            if model.attrs["need_input_grad"]:
                d_layers = gamma * weights[:, None, None] * d_out[None]
                d_inputs.append(norm_backprop(d_layers) if norm_backprop is not None else d_layers)
        raw = model.get_param("weights")
        d_raw = weights * (d_weights - (weights * d_weights).sum()) + 2 * model.attrs["l2_coef"] * raw
        model.inc_grad("weights", d_raw.astype("float32"))
        model.inc_grad("gamma", model.ops.asarray1f([d_gamma]))
        return d_inputs if model.attrs["need_input_grad"] else None

    return outputs, backprop


def find_mixes(model: Model) -> List[Model]:
    """The ScalarMixLayer nodes inside a component's model (one per ELMo listener)."""
    return [node for node in model.walk() if node.name == "elmo_scalar_mix"]


def learned_mix(model: Model) -> Tuple[Floats1d, float]:
    """(softmax-normalised weights, gamma) of a ScalarMixLayer, as numpy values."""
    return model.ops.to_numpy(mix_weights(model)), float(model.get_param("gamma")[0])
