"""A bounded cache of biLM outputs, keyed by a sequence's token strings."""

from collections import OrderedDict
from typing import Hashable, Optional, Tuple

from thinc.types import Floats3d


class FeatureCache:
    """Least-recently-used store of (n_layers, n_tokens, dim) arrays, at most ``max_mb``.

    Entries belong to one version of the biLM weights: ``check_weights`` (called before each
    use with BiLM.weights_version) forgets them all when the version differs.
    """

    def __init__(self, max_mb: float):
        if max_mb < 0:
            raise ValueError(f"The feature cache size must be >= 0 MB, got {max_mb}.")
        self.max_bytes = int(max_mb * 1024 * 1024)
        self.n_bytes = 0
        self.hits = 0
        self.misses = 0
        self._items: "OrderedDict[Tuple[str, ...], Floats3d]" = OrderedDict()
        self._weights_version: Optional[Hashable] = None

    def __len__(self) -> int:
        return len(self._items)

    def check_weights(self, version: Hashable) -> None:
        """Forget everything when the weights changed since the last call."""
        if version != self._weights_version:
            self.clear()
            self._weights_version = version

    def get(self, words: Tuple[str, ...]) -> Optional[Floats3d]:
        layers = self._items.get(words)
        if layers is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(words)
        return layers

    def put(self, words: Tuple[str, ...], layers: Floats3d) -> None:
        if layers.nbytes > self.max_bytes or words in self._items:
            return
        self._items[words] = layers
        self.n_bytes += layers.nbytes
        while self.n_bytes > self.max_bytes:
            _, oldest = self._items.popitem(last=False)
            self.n_bytes -= oldest.nbytes

    def __getstate__(self) -> dict:
        """Pickled (a copy of the pipeline, spaCy's spawned workers) without its entries."""
        state = dict(self.__dict__)
        state.update(n_bytes=0, hits=0, misses=0, _items=OrderedDict(), _weights_version=None)
        return state

    def clear(self) -> None:
        self._items.clear()
        self.n_bytes = 0
