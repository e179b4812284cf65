"""Stacked LSTMs with projection and clipping, both directions run as one batched recurrence."""

from typing import List, NamedTuple, Optional, Tuple

import torch
from torch import nn

from .config import BiLMConfig

FORGET_BIAS = 1.0  # added to the forget gate at run time, as TF's LSTMCell does


class LstmState(NamedTuple):
    """Recurrent state per direction (0 forward, 1 backward), layer and batch row.

    hidden: (2, n_layers, batch, projection_dim); cell: (2, n_layers, batch, lstm_dim).
    """

    hidden: torch.Tensor
    cell: torch.Tensor


class BidirectionalLstmStack(nn.Module):
    """n_layers LSTM layers for each direction; weights hold both directions in dim 0.

    Gates are laid out i, j (candidate), f, o, as in TF's LSTMCell. The backward direction
    receives its sequences already reversed, so both directions step forward together.
    """

    def __init__(self, config: BiLMConfig):
        super().__init__()
        self.config = config
        P, H = config.projection_dim, config.lstm_dim
        self.input_weights = nn.ParameterList(nn.Parameter(torch.empty(2, P, 4 * H)) for _ in range(config.n_layers))
        self.hidden_weights = nn.ParameterList(nn.Parameter(torch.empty(2, P, 4 * H)) for _ in range(config.n_layers))
        self.biases = nn.ParameterList(nn.Parameter(torch.zeros(2, 4 * H)) for _ in range(config.n_layers))
        self.projections = nn.ParameterList(nn.Parameter(torch.empty(2, H, P)) for _ in range(config.n_layers))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for params in (self.input_weights, self.hidden_weights, self.projections):
            for p in params:
                bound = (6.0 / (p.shape[1] + p.shape[2])) ** 0.5
                nn.init.uniform_(p, -bound, bound)
        for b in self.biases:
            nn.init.zeros_(b)

    def zero_state(self, batch_size: int, like: torch.Tensor) -> LstmState:
        c = self.config
        return LstmState(
            like.new_zeros(2, c.n_layers, batch_size, c.projection_dim),
            like.new_zeros(2, c.n_layers, batch_size, c.lstm_dim),
        )

    def forward(
        self, inputs: torch.Tensor, mask: torch.Tensor, state: Optional[LstmState] = None
    ) -> Tuple[List[torch.Tensor], LstmState]:
        """Run the stack.

        inputs: (2, batch, steps, projection_dim), padding after each row's last step.
        mask: (batch, steps) bool, True on real steps.
        Returns each layer's outputs (2, batch, steps, projection_dim), zero on padding, and
        the state after each row's last real step.
        """
        _, batch, steps, P = inputs.shape
        if state is None:
            state = self.zero_state(batch, inputs)
        cfg = self.config
        step_mask = mask.transpose(0, 1)[:, None, :, None]  # (steps, 1, batch, 1)
        x = inputs
        outputs: List[torch.Tensor] = []
        final_h, final_c = [], []
        for layer in range(cfg.n_layers):
            h, c = state.hidden[:, layer], state.cell[:, layer]
            w_h, w_p = self.hidden_weights[layer], self.projections[layer]
            # One matmul for the input contribution of every step, both directions.
            projected = torch.baddbmm(
                self.biases[layer][:, None, :], x.reshape(2, batch * steps, P), self.input_weights[layer]
            ).view(2, batch, steps, -1)
            step_outputs = []
            for t in range(steps):
                gates = projected[:, :, t] + torch.bmm(h, w_h)
                i, j, f, o = gates.chunk(4, dim=-1)
                new_c = torch.sigmoid(f + FORGET_BIAS) * c + torch.sigmoid(i) * torch.tanh(j)
                if cfg.cell_clip is not None:
                    new_c = new_c.clamp(-cfg.cell_clip, cfg.cell_clip)
                new_h = torch.bmm(torch.sigmoid(o) * torch.tanh(new_c), w_p)
                if cfg.proj_clip is not None:
                    new_h = new_h.clamp(-cfg.proj_clip, cfg.proj_clip)
                keep = step_mask[t]
                c = torch.where(keep, new_c, c)
                h = torch.where(keep, new_h, h)
                step_outputs.append(new_h * keep)
            out = torch.stack(step_outputs, dim=2) if step_outputs else x.new_zeros(2, batch, 0, P)
            if cfg.use_skip_connections and layer > 0:
                out = out + x
            outputs.append(out)
            final_h.append(h)
            final_c.append(c)
            x = out
        return outputs, LstmState(torch.stack(final_h, dim=1), torch.stack(final_c, dim=1))
