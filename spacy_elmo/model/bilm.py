"""The ELMo biLM: character encoder + bidirectional LSTM stack, all layers out."""

import itertools
from typing import NamedTuple, Optional, Tuple

import numpy
import torch
from torch import nn

from ..chars import CharacterIds
from .char_encoder import CharacterEncoder
from .config import BiLMConfig
from .lstm import BidirectionalLstmStack, LstmState

_GENERATIONS = itertools.count()  # unique across BiLMs, so versions of two models never match


class BiLMOutput(NamedTuple):
    """layers: (n_layers + 1, batch, tokens, 2 * projection_dim), zero on padding; layer 0 is
    the token representation twice, layer k is [forward_k; backward_k].
    mask: (batch, tokens) bool. state: the LSTM state after each row's last real step."""

    layers: torch.Tensor
    mask: torch.Tensor
    state: LstmState


class BiLM(nn.Module):
    """ELMo's bidirectional language model (Peters et al. 2018), without the softmax.

    Input is character ids of the tokens only, (batch, tokens, max_chars) with 0 rows for
    padding; <S> and </S> are added around each sentence here and removed from the output.
    Stateless by default; pass ``state`` (e.g. a previous output's) to chain batches.
    ``weights_version`` tells caches of derived values (the fast path's) when to recompute.
    """

    def __init__(self, config: BiLMConfig):
        super().__init__()
        self.config = config
        self.char_encoder = CharacterEncoder(config)
        self.lstm = BidirectionalLstmStack(config)
        boundaries = CharacterIds(config.max_characters_per_token)
        self.register_buffer(
            "boundary_char_ids", torch.from_numpy(numpy.stack([boundaries.bos, boundaries.eos])), persistent=False
        )
        self._generation = next(_GENERATIONS)
        self.register_load_state_dict_post_hook(_weights_loaded)

    @property
    def weights_version(self) -> Tuple[int, ...]:
        """A key that changes whenever the weights may have changed: a parameter updated in
        place by torch or replaced (its version counter and data pointer), load_state_dict,
        a device or dtype move, or mark_weights_changed()."""
        return (self._generation, *(v for p in self.parameters() for v in (p._version, p.data_ptr())))

    def mark_weights_changed(self) -> None:
        """Call after changing weights in a way torch does not track (writes through a
        numpy view or ``param.data``, as thinc's optimizer step does)."""
        self._generation = next(_GENERATIONS)

    def _apply(self, fn, recurse: bool = True):  # every .to(), .cpu(), .cuda(), .double()
        module = super()._apply(fn, recurse)
        self.mark_weights_changed()
        return module

    @property
    def device(self) -> torch.device:
        return self.lstm.biases[0].device

    def embed_tokens(self, char_ids: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Context-insensitive token vectors (..., projection_dim); padded positions are zero
        and never run through the CNN."""
        if mask is None:
            mask = (char_ids > 0).any(dim=-1)
        flat_ids = char_ids.reshape(-1, char_ids.shape[-1])
        flat_mask = mask.reshape(-1)
        out = flat_ids.new_zeros(flat_ids.shape[0], self.config.projection_dim, dtype=self.dtype)
        if flat_mask.any():
            out = out.index_put((flat_mask.nonzero().squeeze(1),), self.char_encoder(flat_ids[flat_mask]).to(out.dtype))
        return out.view(*char_ids.shape[:-1], self.config.projection_dim)

    @property
    def dtype(self) -> torch.dtype:
        return self.char_encoder.projection.weight.dtype

    def forward(self, char_ids: torch.Tensor, state: Optional[LstmState] = None) -> BiLMOutput:
        if char_ids.dim() != 3 or char_ids.shape[-1] != self.config.max_characters_per_token:
            raise ValueError(
                f"Expected character ids of shape (batch, tokens, {self.config.max_characters_per_token}), "
                f"got {tuple(char_ids.shape)}. Build them with spacy_elmo.chars.CharacterIds."
            )
        char_ids = char_ids.to(self.device)
        batch, n_tokens, _ = char_ids.shape
        mask = (char_ids > 0).any(dim=-1)
        if batch == 0:
            return self._empty_output(mask)
        lengths = mask.sum(dim=1)
        tokens = self.embed_tokens(char_ids, mask)
        bos, eos = self.char_encoder(self.boundary_char_ids)

        # Forward sequences: <S> t_1 .. t_n </S> then padding.
        steps = n_tokens + 2
        rows = torch.arange(batch, device=self.device)
        forward_seq = torch.cat([bos.expand(batch, 1, -1), tokens, tokens.new_zeros(batch, 1, tokens.shape[-1])], dim=1)
        forward_seq = forward_seq.index_put((rows, lengths + 1), eos.expand(batch, -1))
        seq_mask = torch.arange(steps, device=self.device)[None, :] < (lengths + 2)[:, None]
        # Backward sequences: each row reversed within its own length, padding stays at the end.
        reverse_index = ((lengths + 1)[:, None] - torch.arange(steps, device=self.device)[None, :]).clamp(min=0)
        reverse_index = torch.where(seq_mask, reverse_index, torch.full_like(reverse_index, steps - 1))
        backward_seq = _gather_steps(forward_seq, reverse_index) * seq_mask[..., None]

        outputs, final_state = self.lstm(torch.stack([forward_seq, backward_seq]), seq_mask, state)

        layers = [torch.cat([tokens, tokens], dim=-1)]
        for out in outputs:
            forward_out = out[0, :, 1 : n_tokens + 1]
            backward_out = _gather_steps(out[1], reverse_index)[:, 1 : n_tokens + 1]
            layers.append(torch.cat([forward_out, backward_out], dim=-1) * mask[..., None])
        return BiLMOutput(torch.stack(layers), mask, final_state)

    def _empty_output(self, mask: torch.Tensor) -> BiLMOutput:
        cfg = self.config
        layers = mask.new_zeros(cfg.n_output_layers, *mask.shape, cfg.output_dim, dtype=self.dtype)
        return BiLMOutput(layers, mask, self.lstm.zero_state(0, layers))


def _gather_steps(seq: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return seq.gather(1, index[..., None].expand(-1, -1, seq.shape[-1]))


def _weights_loaded(module: BiLM, incompatible_keys) -> None:
    module.mark_weights_changed()
