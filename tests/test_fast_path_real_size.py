"""Real-size check (pytest -m slow): the fast path equals the exact path within 1e-4 on the
published 'original' sizes (random weights) for a batch long enough to need several chunks
of input gates and with a state carried from one batch to the next."""
from pathlib import Path

import pytest
import torch

from spacy_elmo.chars import CharacterIds
from spacy_elmo.model import BiLM, preset
from spacy_elmo.model.fast import FastBiLM

CONLL = Path(__file__).parents[1] / ".." / "shared" / "data" / "ner" / "conll2003" / "eng.train"


def _sentences(n: int):
    """n CoNLL-2003 sentences (varied lengths, real tokens), else generated ones."""
    if CONLL.exists():
        sentences, current = [], []
        for line in CONLL.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("-DOCSTART-"):
                current.append(line.split()[0])
            elif current:
                sentences.append(current)
                current = []
            if len(sentences) == n:
                return sentences
    generator = torch.Generator().manual_seed(0)
    words = "the of market prices rose sharply after government announced new trade figures Monday".split()
    return [[words[i] for i in torch.randint(len(words), (int(k),), generator=generator)] for k in torch.randint(1, 40, (n,), generator=generator)]


@pytest.mark.slow
def test_fast_path_equals_exact_path_on_the_original_size():
    torch.manual_seed(0)
    model = BiLM(preset("original")).eval()
    fast = FastBiLM(model, chunk_rows=512)
    chars = CharacterIds()
    sentences = _sentences(192)
    state_exact = state_fast = None
    with torch.no_grad():
        for batch in (sentences[:96], sentences[96:]):
            ids = torch.from_numpy(chars.batch(batch))
            exact, got = model(ids, state_exact), fast(ids, state_fast)
            assert got.layers.shape == exact.layers.shape
            assert (got.layers - exact.layers).abs().max().item() <= 1e-4
            assert (got.state.hidden - exact.state.hidden).abs().max().item() <= 1e-4
            assert (got.state.cell - exact.state.cell).abs().max().item() <= 1e-4
            state_exact, state_fast = exact.state, got.state
