"""The language model's output vocabulary: <S>, </S>, <UNK>, then words by frequency."""

from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Sequence, Union

BOS, EOS, UNK = "<S>", "</S>", "<UNK>"
SPECIALS = (BOS, EOS, UNK)


class Vocabulary:
    """Word ids for the softmax, in file order (bilm-tf's vocab.txt: one word per line,
    most frequent first, which the log-uniform negative sampler relies on). Out-of-vocabulary
    words map to <UNK>; the literal tokens "<S>" and "</S>" are the sentence boundaries, as in bilm-tf."""

    def __init__(self, words: Sequence[str]):
        missing = [s for s in SPECIALS if s not in words]
        if missing:
            raise ValueError(f"A vocabulary must contain {', '.join(SPECIALS)}; {', '.join(missing)} missing.")
        if len(set(words)) != len(words):
            duplicate = next(w for w, n in Counter(words).items() if n > 1)
            raise ValueError(f"Vocabulary lists {duplicate!r} more than once; each word must appear once.")
        self.words: List[str] = list(words)
        self.ids: Dict[str, int] = {w: i for i, w in enumerate(self.words)}
        self.unk_id = self.ids[UNK]

    def __len__(self) -> int:
        return len(self.words)

    def id(self, word: str) -> int:
        return self.ids.get(word, self.unk_id)

    @classmethod
    def from_counts(cls, counts: Counter, *, max_size: int, min_count: int = 1) -> "Vocabulary":
        """The ``max_size`` most frequent words seen at least ``min_count`` times (ties by
        first occurrence order), plus the three specials (not counted in max_size)."""
        words = [w for w, n in counts.most_common() if n >= min_count and w not in SPECIALS]
        return cls([*SPECIALS, *words[:max_size]])

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], *, max_size: int, min_count: int = 1) -> "Vocabulary":
        counts: Counter = Counter()
        for sentence in sentences:
            counts.update(sentence)
        return cls.from_counts(counts, max_size=max_size, min_count=min_count)

    def to_disk(self, path: Union[str, Path]) -> None:
        Path(path).write_text("".join(w + "\n" for w in self.words), encoding="utf-8")

    @classmethod
    def from_disk(cls, path: Union[str, Path]) -> "Vocabulary":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"Vocabulary file not found: {path}. Pass a vocab.txt with one word per line.")
        words = [w for w in path.read_text(encoding="utf-8").split("\n") if w.strip()]
        try:
            return cls(words)
        except ValueError as err:
            raise ValueError(f"Vocabulary file {path}: {err}") from None
