"""The biLM layer's backward pass equals torch autograd on the exact path (BiLM.forward on
the same sequences, built by hand): each sequence's gradient is gathered from its Doc's
token positions, whitespace tokens are skipped, and several biLM batches add up."""

import copy
from typing import Dict, List, Tuple

import numpy
import spacy
import torch
from spacy.tokens import Doc
from thinc.api import fix_random_seed

from spacy_elmo.chars import CharacterIds
from spacy_elmo.layers import ElmoBiLM, get_bilm

RELATIVE_TOLERANCE = 2e-5  # float32 sums in another order: ~3e-6 seen
# Two sentences with whitespace in them, a Doc without sentences with a whitespace token, and a
# 5-token Doc; max_sequence_length 4 cuts windows, max_batch_tokens 8 makes several batches.
DOCS = [
    (["The", "biLM", "reads", " ", "both", "ways", ".", "Short", "one", "\n"], [1, 0, 0, 0, 0, 0, 0, 1, 0, 0]),
    (["A", "  ", "b"], None),
    (["Another", "sentence", "of", "five", "words"], None),
]
# The biLM sequences of DOCS, written out: (doc, token positions).
SEQUENCES: List[Tuple[int, List[int]]] = [
    (0, [0, 1, 2]),  # window (0, 4) of sentence 1, without its space
    (0, [4, 5, 6]),  # window (4, 7)
    (0, [7, 8]),  # sentence 2, without the newline
    (1, [0, 2]),
    (2, [0, 1, 2, 3]),
    (2, [4]),
]


def _docs() -> List[Doc]:
    vocab = spacy.blank("en").vocab
    docs = []
    for words, starts in DOCS:
        docs.append(Doc(vocab, words=words, sent_starts=None if starts is None else [bool(s) for s in starts]))
    return docs


def _grads(module: torch.nn.Module) -> Dict[str, torch.Tensor]:
    grads = {}
    for name, p in module.named_parameters():
        assert p.grad is not None, f"{name} got no gradient"
        grads[name] = p.grad.detach().clone()
    return grads


def test_layer_backprop_equals_autograd_on_the_exact_path():
    fix_random_seed(0)
    layer = ElmoBiLM(preset="tiny", max_sequence_length=4, max_batch_tokens=8, cache_mb=0)
    layer.initialize()
    bilm = get_bilm(layer)
    reference = copy.deepcopy(bilm)
    calls = []
    bilm.register_forward_hook(lambda *args: calls.append(1))
    docs = _docs()
    rng = numpy.random.default_rng(0)
    # Non-zero everywhere, whitespace rows too: the layer must drop those.
    d_layers = [rng.normal(size=(3, len(doc), 128)).astype("float32") for doc in docs]

    outputs, backprop = layer.begin_update(docs)
    assert [o.layers.shape for o in outputs] == [d.shape for d in d_layers]
    assert len(calls) >= 3, "the test needs several biLM batches"
    backprop(d_layers)
    got = _grads(bilm)

    chars = CharacterIds(bilm.config.max_characters_per_token)
    words = [[docs[d][i].text for i in positions] for d, positions in SEQUENCES]
    out = reference(torch.from_numpy(chars.batch(words)))
    loss = torch.zeros((), dtype=torch.float64)
    for row, (d, positions) in enumerate(SEQUENCES):
        upstream = torch.from_numpy(d_layers[d][:, positions])
        loss = loss + (out.layers[:, row, : len(positions)] * upstream).double().sum()
    loss.backward()
    expected = _grads(reference)

    assert set(got) == set(expected)
    for name, want in expected.items():
        scale = want.abs().max().item()
        assert scale > 0, name
        error = (got[name] - want).abs().max().item()
        assert error <= RELATIVE_TOLERANCE * scale, (name, error, scale)
    # The forward pass agrees too (exact path in both).
    for row, (d, positions) in enumerate(SEQUENCES):
        numpy.testing.assert_allclose(
            outputs[d].layers[:, positions], out.layers[:, row, : len(positions)].detach().numpy(), atol=1e-5
        )
    for d, doc in enumerate(docs):
        spaces = [t.i for t in doc if t.is_space]
        assert not outputs[d].layers[:, spaces].any()
