"""The softmax shared by the forward and backward LMs and its sampled training loss; its file
is formats.allennlp's (read_softmax, write_softmax)."""

import math
from pathlib import Path
from typing import Optional, Union

import torch
from torch import nn

from ..formats.allennlp import ElmoFormatError, read_softmax, write_softmax
from ..model.fast import pad_rows

_LEFT_OUT = -1e30  # a logit whose exp is 0; finite, so a row of only left-out logits has no NaN gradient


class LogUniformSampler:
    """Negative word ids drawn with replacement from P(k) = log((k+2)/(k+1)) / log(V+1),
    Zipf-like over a frequency-sorted vocabulary (TF's log_uniform_candidate_sampler)."""

    def __init__(self, n_vocab: int, generator: Optional[torch.Generator] = None):
        self.n_vocab = n_vocab
        self.generator = generator if generator is not None else torch.Generator()
        self._log_range = math.log(n_vocab + 1)

    def sample(self, n: int) -> torch.Tensor:
        u = torch.rand(n, generator=self.generator, dtype=torch.float64)
        return ((torch.exp(u * self._log_range)).floor().long() - 1).clamp(0, self.n_vocab - 1)

    def log_probability(self, ids: torch.Tensor) -> torch.Tensor:
        ids = ids.double()
        return (torch.log((ids + 2) / (ids + 1)) / self._log_range).log().float()


class Softmax(nn.Module):
    """Output layer: logits = hidden @ W.T + b over the vocabulary."""

    def __init__(self, n_vocab: int, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_vocab, dim))
        self.bias = nn.Parameter(torch.zeros(n_vocab))
        nn.init.normal_(self.weight, std=1.0 / math.sqrt(dim))  # as bilm-tf

    def full_nll(self, hidden: torch.Tensor, targets: torch.Tensor, max_logits: int = 1 << 24) -> torch.Tensor:
        """Exact negative log-likelihood of each target, hidden (N, P), targets (N,); the
        logits are computed for at most ``max_logits`` (rows x vocabulary) at a time."""
        weight, bias = self.weight.t().to(hidden.dtype), self.bias.to(hidden.dtype)
        rows = max(1, max_logits // weight.shape[1])
        return (
            torch.cat(
                [
                    nn.functional.cross_entropy((h @ weight + bias).float(), t, reduction="none")
                    for h, t in zip(hidden.split(rows), targets.split(rows))
                ]
            )
            if hidden.shape[0]
            else hidden.new_zeros(0)
        )

    def sampled_nll(
        self, hidden: torch.Tensor, targets: torch.Tensor, negatives: torch.Tensor, sampler: LogUniformSampler
    ) -> torch.Tensor:
        """Sampled-softmax estimate (Jean et al. 2015, TF's sampled_softmax_loss): each target
        competes with the shared ``negatives``; logits are corrected by log(expected count)
        and a negative equal to the target (an accidental hit) is left out."""
        n = negatives.shape[0]
        weight, bias = self.weight.to(hidden.dtype), self.bias.to(hidden.dtype)
        true_logits = (hidden * weight[targets]).sum(-1) + bias[targets]
        true_logits = true_logits.float() - (sampler.log_probability(targets) + math.log(n))
        sampled_logits = hidden @ weight[negatives].t() + bias[negatives]
        sampled_logits = sampled_logits.float() - (sampler.log_probability(negatives) + math.log(n))
        sampled_logits = sampled_logits.masked_fill(targets[:, None] == negatives[None, :], float("-inf"))
        logits = torch.cat([true_logits[:, None], sampled_logits], dim=1)
        return torch.logsumexp(logits, dim=1) - true_logits

    def fast_sampled_nll(
        self,
        hidden: torch.Tensor,
        targets: torch.Tensor,
        negatives: torch.Tensor,
        sampler: LogUniformSampler,
        matmul_dtype: Optional[torch.dtype] = None,
        column_multiple: int = 1,
    ) -> torch.Tensor:
        """sampled_nll with one matmul over the distinct negatives: a negative drawn k times
        enters the log-sum-exp once, with log(k) added (the same sum). Equal to sampled_nll up
        to float rounding in fp32; ``matmul_dtype`` runs the logits' matmul in that dtype.
        The distinct negatives are padded to a multiple of ``column_multiple`` columns whose
        exp(logit) is 0 (no effect on the loss or gradients; fewer matmul shapes, see pad_rows)."""
        n = negatives.shape[0]
        distinct, counts = torch.unique(negatives, return_counts=True)  # sorted
        log_expected = sampler.log_probability(distinct) + math.log(n)
        sampled_bias = pad_rows(self.bias[distinct] - log_expected + counts.log(), column_multiple, _LEFT_OUT)
        # Accidental hits: a target's own column (at most one among distinct ids) is left out.
        column = torch.searchsorted(distinct, targets).clamp(max=distinct.shape[0] - 1)
        hit_rows = torch.nonzero(distinct[column] == targets).squeeze(1)
        true_logits = (hidden.float() * self.weight[targets]).sum(-1) + self.bias[targets]
        true_logits = true_logits - (sampler.log_probability(targets) + math.log(n))
        columns = pad_rows(distinct, column_multiple, int(distinct[0]))  # any word: its exp(logit) is 0
        return _SampledNll.apply(
            hidden, self.weight[columns], sampled_bias, true_logits, (hit_rows, column[hit_rows]), matmul_dtype
        )

    def to_disk(self, path: Union[str, Path]) -> None:
        write_softmax(self.weight.detach().float().cpu().numpy(), self.bias.detach().float().cpu().numpy(), path)

    def load(self, path: Union[str, Path]) -> None:
        """Copy the weights of a softmax file, checking their shapes."""
        weight, bias = read_softmax(path)
        if weight.shape != tuple(self.weight.shape) or bias.shape != tuple(self.bias.shape):
            raise ElmoFormatError(
                f"Softmax weight file {path} holds W {weight.shape} and b {bias.shape}, but the vocabulary and model need "
                f"{tuple(self.weight.shape)} and {tuple(self.bias.shape)}: pass the vocab.txt that belongs to this softmax (paths.vocab)."
            )
        with torch.no_grad():
            self.weight.copy_(torch.from_numpy(weight))
            self.bias.copy_(torch.from_numpy(bias))


class _SampledNll(torch.autograd.Function):
    """-log softmax of the true logit against the sampled ones, with the sampled logits
    (hidden @ weight.T + bias) made, normalised and turned into probabilities in one buffer:
    no per-element autograd graph over the (rows x distinct negatives) logits. ``left_out``
    (row ids, column ids) are the accidental hits; ``dtype`` is the matmuls' operand dtype.

    *Shape:* hidden (N, P), weight (D, P), bias (D,), true_logits (N,) -> (N,)"""

    @staticmethod
    def forward(ctx, hidden, weight, bias, true_logits, left_out, dtype):
        low = dtype or hidden.dtype
        hidden_low, weight_low = hidden.to(low), weight.to(low)
        if dtype is None:
            probs = torch.addmm(bias, hidden, weight.t())
        else:
            probs = torch.add(bias, hidden_low @ weight_low.t())
        probs.index_put_(left_out, probs.new_tensor(_LEFT_OUT))
        log_norm = torch.logaddexp(true_logits, torch.logsumexp(probs, dim=1))
        probs.sub_(log_norm[:, None]).exp_()
        ctx.save_for_backward(hidden_low, weight_low, probs, true_logits, log_norm)
        ctx.dtypes = (hidden.dtype, weight.dtype)
        return log_norm - true_logits

    @staticmethod
    def backward(ctx, d_nll):
        hidden_low, weight_low, probs, true_logits, log_norm = ctx.saved_tensors
        hidden_dtype, weight_dtype = ctx.dtypes
        d_logits = probs.mul_(d_nll[:, None])  # in place: backward runs once per forward
        d_true = d_nll * (torch.exp(true_logits - log_norm) - 1)
        d_low = d_logits.to(hidden_low.dtype)
        d_hidden = (d_low @ weight_low).to(hidden_dtype)
        d_weight = (d_low.t() @ hidden_low).to(weight_dtype)
        return d_hidden, d_weight, d_logits.sum(0), d_true, None, None
