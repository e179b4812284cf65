"""Hyper-parameters of a biLM, with the published sizes as named presets."""

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

Filters = List[Tuple[int, int]]

_PUBLISHED_FILTERS: Filters = [(1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024)]


@dataclass(kw_only=True)
class BiLMConfig:
    """Sizes of the character CNN and the LSTM stack, as in bilm-tf's options.json.

    char_embedding_dim: size of each character embedding.
    filters: (width, number of filters) for each convolution.
    n_highway: number of highway layers after the convolutions.
    activation: "relu" or "tanh", applied after max-pooling each convolution.
    max_characters_per_token: character slots per token (bytes + begin/end marks).
    n_characters: rows of the character embedding in options.json (261 or 262).
    lstm_dim: LSTM memory cell size.
    projection_dim: size of the LSTM's projected output and of the token representation.
    n_layers: LSTM layers per direction.
    cell_clip, proj_clip: clipping of the memory cell and of the projection (None: no clip).
    use_skip_connections: add each LSTM layer's input to its output, from the second layer on.
    """

    char_embedding_dim: int = 16
    filters: Filters = field(default_factory=lambda: list(_PUBLISHED_FILTERS))
    n_highway: int = 2
    activation: str = "relu"
    max_characters_per_token: int = 50
    n_characters: int = 262
    lstm_dim: int = 4096
    projection_dim: int = 512
    n_layers: int = 2
    cell_clip: Optional[float] = 3.0
    proj_clip: Optional[float] = 3.0
    use_skip_connections: bool = True

    def __post_init__(self) -> None:
        self.filters = [(int(w), int(n)) for w, n in self.filters]
        problems = []
        if self.activation not in ("relu", "tanh"):
            problems.append(f"activation must be 'relu' or 'tanh', got {self.activation!r}")
        if not self.filters:
            problems.append("filters must list at least one (width, count) pair")
        if any(w < 1 or n < 1 for w, n in self.filters):
            problems.append(f"filter widths and counts must be positive, got {self.filters}")
        if any(w > self.max_characters_per_token for w, _ in self.filters):
            problems.append("a filter is wider than max_characters_per_token")
        for name in ("char_embedding_dim", "lstm_dim", "projection_dim", "n_layers"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be positive, got {getattr(self, name)}")
        if self.max_characters_per_token < 3:
            problems.append(
                f"max_characters_per_token must be at least 3 for begin, one byte and end, got {self.max_characters_per_token}"
            )
        if self.n_highway < 0:
            problems.append(f"n_highway must be >= 0, got {self.n_highway}")
        if self.n_characters not in (261, 262):
            problems.append(f"n_characters must be 261 or 262 (ELMo's byte vocabulary), got {self.n_characters}")
        if problems:
            raise ValueError("Invalid biLM configuration: " + "; ".join(problems) + ".")

    @property
    def n_filters(self) -> int:
        return sum(n for _, n in self.filters)

    @property
    def output_dim(self) -> int:
        """Width of each ELMo layer: [forward; backward] projections."""
        return 2 * self.projection_dim

    @property
    def n_output_layers(self) -> int:
        return self.n_layers + 1

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    def with_changes(self, **changes: Any) -> "BiLMConfig":
        return replace(self, **changes)


PRESETS: Dict[str, BiLMConfig] = {
    "tiny": BiLMConfig(
        char_embedding_dim=8,
        filters=[(1, 16), (2, 16), (3, 32), (4, 64), (5, 128)],
        n_highway=1,
        lstm_dim=256,
        projection_dim=64,
    ),
    # Between tiny and small, the project's CPU study size: per CPU-hour it reached a lower dev
    # perplexity than small (project/report/README.md).
    "mid": BiLMConfig(
        filters=[(1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512)],
        n_highway=1,
        lstm_dim=512,
        projection_dim=128,
    ),
    "small": BiLMConfig(n_highway=1, lstm_dim=1024, projection_dim=128),
    "medium": BiLMConfig(n_highway=1, lstm_dim=2048, projection_dim=256),
    "original": BiLMConfig(n_highway=2, lstm_dim=4096, projection_dim=512),
}


def preset(name: str) -> BiLMConfig:
    """A copy of a named preset: tiny, mid, small, medium or original."""
    if name not in PRESETS:
        raise ValueError(f"Unknown biLM preset {name!r}; choose one of {sorted(PRESETS)}.")
    return replace(PRESETS[name], filters=list(PRESETS[name].filters))
