"""The training fast path (model/fast_training.py, Softmax.fast_sampled_nll) gives the exact
path's loss and gradients on a fixed batch: repeated tokens, long tokens, padding, carried
LSTM state, clipping. fp32 rounding differs between the two (the exact path's Conv1d alone
is ~1e-5 from float64 on the char embedding's gradient), so both are held to the exact path
in float64."""

import pytest
import torch

from spacy_elmo.chars import CharacterIds
from spacy_elmo.model import BiLM, LstmState, preset
from spacy_elmo.model.fast_training import lstm_stack, token_vectors
from spacy_elmo.pretrain import BiLanguageModel
from spacy_elmo.pretrain import train as train_module
from spacy_elmo.pretrain.batches import make_batch, sentence_windows
from spacy_elmo.pretrain.softmax import LogUniformSampler
from spacy_elmo.pretrain.vocab import Vocabulary

SENTENCES = [
    "the cat sat on the mat and the cat sat again".split(),
    ["internationalisation", "x" * 60, "the", "y" * 44, "mat"],  # slots not trimmable; long group
    "a dog".split(),  # padding: shorter than the others
    "on the log the dog sat".split(),
]


def _lm(dtype=torch.float64):
    torch.manual_seed(0)
    bilm = BiLM(preset("tiny").with_changes(cell_clip=0.5, proj_clip=0.5))  # clipping is hit
    for bias in bilm.lstm.biases:
        torch.nn.init.normal_(bias, std=0.5)
    vocab = Vocabulary(["<S>", "</S>", "<UNK>", "the", "cat", "sat", "on", "mat", "dog", "a"])
    lm = BiLanguageModel(bilm, len(vocab), dropout=0.0).to(dtype)
    windows = [next(sentence_windows(s, 9)) for s in SENTENCES]  # first windows, of unequal length
    return lm, make_batch(windows, vocab, CharacterIds()), vocab


def _loss_and_gradients(lm, batch, state, negatives, sampler, fast):
    lm.fast = fast
    lm.zero_grad()
    nll, final = lm(batch, state, negatives=negatives, sampler=sampler)
    (nll.sum() + 0.3 * final.hidden.sum() + 0.2 * final.cell.sum()).backward()
    return nll.detach().double(), {name: p.grad.double() for name, p in lm.named_parameters()}


def _state(lm, rows, dtype):
    generator = torch.Generator().manual_seed(1)
    zero = lm.bilm.lstm.zero_state(rows, torch.zeros(1, dtype=dtype))
    return LstmState(
        torch.randn(zero.hidden.shape, generator=generator, dtype=dtype),
        torch.randn(zero.cell.shape, generator=generator, dtype=dtype),
    )


def _relative(a, b):
    return float((a - b).norm() / b.norm().clamp(min=1e-30))


@pytest.mark.parametrize("objective", ["sampled", "full"])
def test_fast_training_path_equals_exact_path(objective):
    lm, batch, vocab = _lm(torch.float64)
    assert not batch.mask.all()  # padding in the batch
    sampler = LogUniformSampler(len(vocab), torch.Generator().manual_seed(2))
    negatives = sampler.sample(40) if objective == "sampled" else None  # repeats and accidental hits
    state = _state(lm, batch.mask.shape[0], torch.float64)
    exact_loss, exact = _loss_and_gradients(lm, batch, state, negatives, sampler, fast=False)
    fast_loss, fast = _loss_and_gradients(lm, batch, state, negatives, sampler, fast=True)
    assert set(fast) == set(exact) and all(g.abs().sum() > 0 for g in exact.values())
    # float64: the same computation up to rounding (the sampler's log-probabilities are fp32)
    assert _relative(fast_loss, exact_loss) <= 1e-7
    for name in exact:
        assert _relative(fast[name], exact[name]) <= 1e-6, name
    # fp32 fast path against the float64 exact path: within 1e-5 relative
    lm32 = lm.float()
    fast32_loss, fast32 = _loss_and_gradients(
        lm32, batch, LstmState(*(s.float() for s in state)), negatives, sampler, fast=True
    )
    assert _relative(fast32_loss, exact_loss) <= 1e-5
    for name in exact:
        assert _relative(fast32[name], exact[name]) <= 1e-5, name


def test_lstm_stack_gradients_reach_inputs_and_state():
    lm, batch, _ = _lm(torch.float64)
    lstm = lm.bilm.lstm
    generator = torch.Generator().manual_seed(3)
    inputs = torch.randn(2, 4, 6, lstm.config.projection_dim, generator=generator, dtype=torch.float64)
    mask = torch.tensor(
        [[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0]], dtype=torch.bool
    )
    state = _state(lm, 4, torch.float64)
    upstream = [
        torch.randn(inputs.shape, generator=generator, dtype=torch.float64) for _ in range(lstm.config.n_layers)
    ]

    def run(forward):
        x, h0, c0 = (t.clone().requires_grad_() for t in (inputs, state.hidden, state.cell))
        outputs, final = forward(x, mask, LstmState(h0, c0))
        (sum((o * u).sum() for o, u in zip(outputs, upstream)) + final.hidden.sum() + final.cell.sum()).backward()
        return [o.detach() for o in outputs] + [final.hidden.detach(), final.cell.detach(), x.grad, h0.grad, c0.grad]

    exact = run(lstm)
    fast = run(lambda x, m, s: lstm_stack(lstm, x, m, s))
    for got, want in zip(fast, exact):
        assert _relative(got, want) <= 1e-9


def test_padding_rows_to_fewer_matmul_shapes_changes_no_loss_or_gradient():
    lm, batch, vocab = _lm(torch.float64)
    chars = batch.token_chars[1:]
    sampler = LogUniformSampler(len(vocab), torch.Generator().manual_seed(2))
    negatives = sampler.sample(40)
    assert chars.shape[0] % 64 and torch.unique(negatives).shape[0] % 64  # both get padded
    generator = torch.Generator().manual_seed(4)
    upstream = torch.randn(chars.shape[0], lm.bilm.config.projection_dim, generator=generator, dtype=torch.float64)
    hidden = torch.randn(30, lm.bilm.config.projection_dim, generator=generator, dtype=torch.float64)
    targets = torch.randint(0, len(vocab), (30,), generator=generator)

    def run(multiple):
        lm.zero_grad()
        vectors = token_vectors(lm.bilm.char_encoder, chars, None, multiple)
        h = hidden.clone().requires_grad_()
        nll = lm.softmax.fast_sampled_nll(h, targets, negatives, sampler, None, multiple)
        ((vectors * upstream).sum() + nll.sum()).backward()
        grads = {name: p.grad.clone() for name, p in lm.named_parameters() if p.grad is not None}
        return vectors.detach(), nll.detach(), h.grad, grads

    vectors, nll, d_hidden, grads = run(1)
    padded_vectors, padded_nll, padded_d_hidden, padded_grads = run(64)
    assert padded_vectors.shape == vectors.shape and padded_nll.shape == nll.shape
    assert _relative(padded_vectors, vectors) <= 1e-12 and _relative(padded_nll, nll) <= 1e-12
    assert _relative(padded_d_hidden, d_hidden) <= 1e-12
    assert set(padded_grads) == set(grads) and "softmax.weight" in grads
    for name in grads:
        assert _relative(padded_grads[name], grads[name]) <= 1e-12, name


def test_bf16_matmuls_are_close_to_fp32_and_differ():
    lm, batch, vocab = _lm(torch.float32)
    sampler = LogUniformSampler(len(vocab), torch.Generator().manual_seed(2))
    negatives = sampler.sample(40)
    state = _state(lm, batch.mask.shape[0], torch.float32)
    fp32_loss, fp32 = _loss_and_gradients(lm, batch, state, negatives, sampler, fast=True)
    lm.matmul_dtype = torch.bfloat16
    bf16_loss, bf16 = _loss_and_gradients(lm, batch, state, negatives, sampler, fast=True)
    assert 0 < _relative(bf16_loss, fp32_loss) <= 2e-2
    assert max(_relative(bf16[n], fp32[n]) for n in fp32) <= 0.1
    lm.eval()  # evaluation stays fp32
    with torch.no_grad():
        eval_bf16, _ = lm(batch, state)
        lm.matmul_dtype = None
        eval_fp32, _ = lm(batch, state)
    assert torch.equal(eval_bf16, eval_fp32)


def test_mixed_precision_setting(monkeypatch):
    cpu = torch.device("cpu")
    assert train_module.bf16_matmuls(False, cpu) is None
    for check in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        monkeypatch.setattr(torch.cpu, check, lambda: False, raising=False)
    assert train_module.bf16_matmuls("auto", cpu) is None
    with pytest.raises(
        ValueError,
        match=r"mixed_precision = true asks for bf16 matmuls, which this CPU .*AMX.*avx512_bf16.*mixed_precision false",
    ):
        train_module.bf16_matmuls(True, cpu)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True, raising=False)
    assert train_module.bf16_matmuls("auto", cpu) is torch.bfloat16
    assert train_module.bf16_matmuls(True, cpu) is torch.bfloat16
