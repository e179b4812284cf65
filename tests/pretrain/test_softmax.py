"""The shared softmax: exact and sampled losses, the negative sampler, the hdf5 file."""

import math

import h5py
import pytest
import torch

from spacy_elmo.formats.allennlp import ElmoFormatError
from spacy_elmo.pretrain.softmax import LogUniformSampler, Softmax


def test_log_uniform_sampler_matches_its_distribution():
    sampler = LogUniformSampler(50, torch.Generator().manual_seed(0))
    ids = sampler.sample(200_000)
    assert ids.min() >= 0 and ids.max() <= 49
    observed = torch.bincount(ids, minlength=50).double() / ids.numel()
    expected = sampler.log_probability(torch.arange(50)).double().exp()
    assert expected.sum().item() == pytest.approx(1.0, abs=1e-5)
    # every id within 5 standard errors of its probability (the rarest ids ~0.5 %, not only the head)
    assert ((observed - expected).abs() <= 5 * (expected * (1 - expected) / ids.numel()).sqrt()).all()
    assert expected[0].item() == pytest.approx(math.log(2) / math.log(51), rel=1e-5)


def test_full_nll_is_cross_entropy_over_the_vocabulary():
    torch.manual_seed(0)  # the softmax's initial weights
    softmax = Softmax(7, 4)
    with torch.no_grad():
        softmax.bias.normal_(generator=torch.Generator().manual_seed(1))
    hidden, targets = torch.randn(3, 4, generator=torch.Generator().manual_seed(2)), torch.tensor([0, 6, 2])
    logits = (hidden.double() @ softmax.weight.double().t() + softmax.bias.double()).detach()
    expected = -logits.log_softmax(-1)[torch.arange(3), targets]
    for got in (
        softmax.full_nll(hidden, targets),
        softmax.full_nll(hidden, targets, max_logits=7),
    ):  # then a row at a time
        assert torch.allclose(got.double(), expected, atol=1e-5, rtol=1e-5)


def test_sampled_nll_corrects_by_expected_count_and_drops_accidental_hits():
    torch.manual_seed(0)  # the softmax's initial weights
    softmax = Softmax(10, 4)
    sampler = LogUniformSampler(10)
    hidden, targets, negatives = (
        torch.randn(2, 4, generator=torch.Generator().manual_seed(1)),
        torch.tensor([3, 5]),
        torch.tensor([1, 3, 8]),
    )
    logq = lambda ids: sampler.log_probability(ids) + math.log(3)  # noqa: E731
    logits = hidden @ softmax.weight.t() + softmax.bias
    got = softmax.sampled_nll(hidden, targets, negatives, sampler)
    for row in range(2):
        t = targets[row]
        true = logits[row, t] - logq(t)
        others = [logits[row, n] - logq(n) for n in negatives if n != t]  # 3 is an accidental hit for row 0
        expected = torch.logsumexp(torch.stack([true, *others]), 0) - true
        assert got[row].item() == pytest.approx(expected.item(), abs=1e-5)


def test_softmax_file_round_trip_and_shape_error(tmp_path):
    torch.manual_seed(0)
    softmax = Softmax(6, 4)
    with torch.no_grad():
        softmax.bias.uniform_(-1, 1)  # not the zeros a fresh softmax starts with
    softmax.to_disk(tmp_path / "softmax.hdf5")
    with h5py.File(tmp_path / "softmax.hdf5") as f:
        assert f["softmax/W"].shape == (6, 4) and f["softmax/b"].shape == (6,)
    loaded = Softmax(6, 4)
    loaded.load(tmp_path / "softmax.hdf5")
    assert torch.equal(loaded.weight, softmax.weight) and torch.equal(loaded.bias, softmax.bias)
    with pytest.raises(ElmoFormatError, match=r"holds W \(6, 4\).*need \(7, 4\).*paths.vocab"):
        Softmax(7, 4).load(tmp_path / "softmax.hdf5")
