"""The biLM with its shared softmax: the two language models trained in pretraining."""

from typing import Optional, Tuple

import torch
from torch import nn

from ..model import BiLM, LstmState
from ..model.fast_training import lstm_stack, token_vectors
from .batches import LMBatch
from .softmax import LogUniformSampler, Softmax

# With matmul_dtype, the distinct tokens and negatives of a batch are padded to a multiple of
# this many rows: their counts change every step, and oneDNN keeps a kernel per shape.
SHAPE_MULTIPLE = 64


class BiLanguageModel(nn.Module):
    """Forward and backward LMs over one char-CNN token encoder and one softmax.

    Dropout is applied to the token vectors entering the LSTM stack and to the top LSTM
    layer's output before the softmax. ``fast`` runs the training fast path
    (model/fast_training.py, the sampled softmax over distinct negatives): the same loss and
    gradients as the exact path up to float rounding; ``matmul_dtype`` (fast path only) runs
    its matmuls in e.g. bf16 with fp32 weights and state, in training mode (evaluation, in
    eval mode, stays fp32).
    """

    def __init__(
        self,
        bilm: BiLM,
        n_vocab: int,
        *,
        dropout: float = 0.1,
        fast: bool = True,
        matmul_dtype: Optional[torch.dtype] = None,
    ):
        super().__init__()
        if matmul_dtype is not None and not fast:
            raise ValueError("matmul_dtype needs the fast path (fast=True).")
        self.bilm = bilm
        self.softmax = Softmax(n_vocab, bilm.config.projection_dim)
        self.dropout = nn.Dropout(dropout)
        self.fast = fast
        self.matmul_dtype = matmul_dtype

    def hidden(self, batch: LMBatch, state: Optional[LstmState] = None) -> Tuple[torch.Tensor, LstmState]:
        """Top LSTM layer for each input position, (2, rows, steps, projection_dim); without
        a graph through the biLM when none of its weights learns."""
        if torch.is_grad_enabled() and not any(p.requires_grad for p in self.bilm.parameters()):
            with torch.no_grad():
                return self.hidden(batch, state)
        device = self.bilm.device
        token_chars, mask = batch.token_chars.to(device), batch.mask.to(device)
        dtype = self.matmul_dtype if self.training else None
        if self.fast:  # row 0 (padding) is zero
            vectors = token_vectors(self.bilm.char_encoder, token_chars[1:], dtype, _row_multiple(dtype))
            vectors = torch.cat([vectors.new_zeros(1, vectors.shape[1]), vectors])
        else:
            vectors = self.bilm.embed_tokens(token_chars)
        inputs = self.dropout(vectors[batch.token_index.to(device)])
        if self.fast:
            outputs, state = lstm_stack(self.bilm.lstm, inputs, mask, state, dtype)
        else:
            outputs, state = self.bilm.lstm(inputs, mask, state)
        return self.dropout(outputs[-1].contiguous()), state

    def forward(
        self,
        batch: LMBatch,
        state: Optional[LstmState] = None,
        *,
        negatives: Optional[torch.Tensor] = None,
        sampler: Optional[LogUniformSampler] = None,
    ) -> Tuple[torch.Tensor, LstmState]:
        """Summed negative log-likelihood per direction (2,), and the LSTM state after the batch.
        With ``negatives`` the sampled-softmax estimate, else the exact full softmax."""
        hidden, state = self.hidden(batch, state)
        mask = batch.mask.to(hidden.device)
        targets = batch.targets.to(hidden.device)[:, mask]  # (2, N)
        flat_hidden = hidden[:, mask].reshape(-1, hidden.shape[-1])
        if negatives is None:
            nll = self.softmax.full_nll(flat_hidden, targets.reshape(-1))
        elif self.fast:
            dtype = self.matmul_dtype if self.training else None
            nll = self.softmax.fast_sampled_nll(
                flat_hidden,
                targets.reshape(-1),
                negatives.to(hidden.device),
                sampler,
                dtype,
                _row_multiple(dtype),
            )
        else:
            nll = self.softmax.sampled_nll(flat_hidden, targets.reshape(-1), negatives.to(hidden.device), sampler)
        return nll.view(2, -1).sum(dim=1), state


def _row_multiple(matmul_dtype: Optional[torch.dtype]) -> int:
    """The row padding for matmuls in ``matmul_dtype`` (None: fp32, not padded)."""
    return 1 if matmul_dtype is None else SHAPE_MULTIPLE
