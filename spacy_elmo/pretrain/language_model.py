"""The biLM with its shared softmax: the two language models trained in pretraining."""
from typing import Optional, Tuple

import torch
from torch import nn

from ..model import BiLM, LstmState
from .batches import LMBatch
from .softmax import LogUniformSampler, Softmax


class BiLanguageModel(nn.Module):
    """Forward and backward LMs over one char-CNN token encoder and one softmax.

    Dropout is applied to the token vectors entering the LSTM stack and to the top LSTM
    layer's output before the softmax.
    """

    def __init__(self, bilm: BiLM, n_vocab: int, *, dropout: float = 0.1):
        super().__init__()
        self.bilm = bilm
        self.softmax = Softmax(n_vocab, bilm.config.projection_dim)
        self.dropout = nn.Dropout(dropout)

    def hidden(self, batch: LMBatch, state: Optional[LstmState] = None) -> Tuple[torch.Tensor, LstmState]:
        """Top LSTM layer for each input position, (2, rows, steps, projection_dim)."""
        device = self.bilm.device
        vectors = self.bilm.embed_tokens(batch.token_chars.to(device))  # row 0 (padding) is zero
        inputs = self.dropout(vectors[batch.token_index.to(device)])
        outputs, state = self.bilm.lstm(inputs, batch.mask.to(device), state)
        return self.dropout(outputs[-1]), state

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
        else:
            nll = self.softmax.sampled_nll(flat_hidden, targets.reshape(-1), negatives.to(hidden.device), sampler)
        return nll.view(2, -1).sum(dim=1), state
