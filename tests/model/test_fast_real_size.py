"""Real-size check: the fast path equals the exact path within 1e-4 on the
published 'original' sizes (random weights) for a batch long enough to need several chunks
of input gates and with a state carried from one batch to the next."""

import torch
from project_scripts import load_script

from spacy_elmo.chars import CharacterIds
from spacy_elmo.model import BiLM, preset
from spacy_elmo.model.fast import FastBiLM


def test_fast_path_equals_exact_path_on_the_original_size(conll_dir):
    torch.manual_seed(0)
    model = BiLM(preset("original")).eval()
    fast = FastBiLM(model, chunk_rows=512)
    chars = CharacterIds()
    sentences = [words for words, _ in load_script("convert_conll").read_conll2003(conll_dir / "eng.train", limit=192)]
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
