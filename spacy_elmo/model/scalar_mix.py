"""ELMo's task-specific layer mix: gamma * sum_j softmax(s)_j * layer_j."""

from typing import Optional, Sequence

import torch
from torch import nn


class ScalarMix(nn.Module):
    """Mix (n_layers, batch, tokens, dim) layers into (batch, tokens, dim).

    With ``layer_norm`` each layer is normalised per sentence (mean and variance over that
    sentence's real tokens and all dimensions), never over the whole batch.
    """

    def __init__(
        self,
        n_layers: int,
        *,
        initial_weights: Optional[Sequence[float]] = None,
        gamma: float = 1.0,
        layer_norm: bool = False,
        trainable: bool = True,
        epsilon: float = 1e-12,
    ):
        super().__init__()
        weights = (
            torch.zeros(n_layers)
            if initial_weights is None
            else torch.tensor(list(initial_weights), dtype=torch.float32)
        )
        if weights.shape != (n_layers,):
            raise ValueError(f"ScalarMix got {len(weights)} initial weights for {n_layers} layers.")
        self.weights = nn.Parameter(weights, requires_grad=trainable)
        self.gamma = nn.Parameter(torch.tensor(float(gamma)), requires_grad=trainable)
        self.layer_norm = layer_norm
        self.epsilon = epsilon

    @property
    def normalized_weights(self) -> torch.Tensor:
        return torch.softmax(self.weights, dim=0)

    def forward(self, layers: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        if layers.shape[0] != self.weights.shape[0]:
            raise ValueError(f"ScalarMix has {self.weights.shape[0]} weights but got {layers.shape[0]} layers.")
        if self.layer_norm:
            if mask is None:
                mask = torch.ones(layers.shape[1:3], dtype=torch.bool, device=layers.device)
            layers = self._normalize(layers, mask)
        weights = self.normalized_weights.to(layers.dtype)
        return self.gamma.to(layers.dtype) * torch.tensordot(weights, layers, dims=([0], [0]))

    def _normalize(self, layers: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask[None, :, :, None].to(layers.dtype)
        count = (m.sum(dim=(2, 3), keepdim=True) * layers.shape[-1]).clamp(min=1)
        mean = (layers * m).sum(dim=(2, 3), keepdim=True) / count
        var = (((layers - mean) * m) ** 2).sum(dim=(2, 3), keepdim=True) / count
        return (layers - mean) / torch.sqrt(var + self.epsilon) * m
