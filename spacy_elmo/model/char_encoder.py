"""The context-insensitive token encoder: character CNN, highway layers, projection."""

import torch
from torch import nn

from .config import BiLMConfig

_ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}


class Highway(nn.Module):
    """TF-convention highway: g * act(x W_t + b_t) + (1 - g) * x with g = sigmoid(x W_c + b_c)."""

    def __init__(self, dim: int):
        super().__init__()
        self.transform = nn.Linear(dim, dim)
        self.carry = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = torch.sigmoid(self.carry(x))
        return gate * torch.relu(self.transform(x)) + (1.0 - gate) * x


class CharacterEncoder(nn.Module):
    """Map (n_tokens, max_chars) character ids to (n_tokens, projection_dim) vectors.

    Character id 0 is padding and embeds to zeros; per filter the convolution is max-pooled
    over character positions and then activated, as in bilm-tf.
    """

    def __init__(self, config: BiLMConfig):
        super().__init__()
        self.config = config
        # Row 0 (padding) is all zeros; rows 1..261 are the 261 rows of bilm-tf's char_embed.
        self.char_embedding = nn.Embedding(262, config.char_embedding_dim, padding_idx=0)
        self.convolutions = nn.ModuleList(nn.Conv1d(config.char_embedding_dim, n, width) for width, n in config.filters)
        self.highways = nn.ModuleList(Highway(config.n_filters) for _ in range(config.n_highway))
        self.projection = nn.Linear(config.n_filters, config.projection_dim)
        self.activation = _ACTIVATIONS[config.activation]

    def forward(self, char_ids: torch.Tensor) -> torch.Tensor:
        return self.transform(self.pool(char_ids))

    def pool(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Each filter max-pooled over character positions, then activated.

        *Shape:* (n, max_chars) -> (n, n_filters)"""
        chars = self.char_embedding(char_ids).transpose(1, 2)  # (n, dim, max_chars)
        return torch.cat([self.activation(conv(chars).amax(dim=-1)) for conv in self.convolutions], dim=-1)

    def transform(self, pooled: torch.Tensor) -> torch.Tensor:
        """Highway layers and projection.

        *Shape:* (n, n_filters) -> (n, projection_dim)"""
        x = pooled
        for highway in self.highways:
            x = highway(x)
        return self.projection(x)
