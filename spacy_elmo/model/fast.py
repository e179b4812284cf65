"""Inference fast path of the biLM: BiLM.forward's outputs (fp32, within 1e-4) with less work.

Levers, each measured in benchmarks/bench_bilm.py:
- char CNN: each distinct token once per batch, a bounded cache of token vectors across
  batches, character slots trimmed to the longest token + the widest filter (exact: every
  token keeps at least one all-padding window), short and long tokens in two groups when
  that saves a fifth of the windows, all filters as one unfold + matmul;
- LSTM: rows sorted by length and packed time-major, so padding is never computed and no
  masking is needed; the first layer's input gates computed once per distinct token (they
  depend on the token alone); the other layers' input gates in chunks of steps, one matmul
  each; the forget bias folded into the input projection; scratch tensors reused across
  steps and calls (fresh multi-MB tensors are page-faulted anew each time); optionally bf16
  matmuls (fp32 cell state).
"""

import itertools
import math
from collections import OrderedDict
from typing import Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from ..chars import PADDING, CharacterIds
from .bilm import BiLM, BiLMOutput
from .lstm import FORGET_BIAS, LstmState

_PADDING_CHAR = PADDING + 1  # the shifted id of the padding character inside a token
# bf16 matmuls: rows padded to a multiple of these (gate tables and chunks; per-step products),
# so that a long run meets a few dozen matmul shapes (see pad_rows).
_ROWS = 64
_STEP_ROWS = 8


class TokenVectorCache:
    """A bounded LRU map from a token's character id row to its char-CNN vector."""

    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        self._entries: "OrderedDict[bytes, torch.Tensor]" = OrderedDict()
        self._weights_version: Optional[Tuple[int, ...]] = None

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def check_weights(self, version: Tuple[int, ...]) -> None:
        """Forget everything when the weights changed since the last call (see BiLM.weights_version)."""
        if version != self._weights_version:
            self._entries.clear()
            self._weights_version = version

    def get(self, key: bytes) -> Optional[torch.Tensor]:
        vector = self._entries.get(key)
        if vector is not None:
            self._entries.move_to_end(key)
        return vector

    def put(self, key: bytes, vector: torch.Tensor) -> None:
        self._entries[key] = vector
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


class FastBiLM(nn.Module):
    """Inference-only view of a BiLM with the same inputs and outputs as ``BiLM.forward``.

    It shares the BiLM's parameters (no copy) and runs without autograd; train or fine-tune
    through the BiLM itself. ``cache_size`` bounds the token-vector cache (0 disables it);
    ``matmul_dtype=torch.bfloat16`` runs the LSTM matmuls in bf16 (not within 1e-4 of fp32;
    see the benchmark for its measured error); ``chunk_rows`` bounds the packed rows whose
    input gates are computed in one matmul. Scratch memory kept between calls: about
    (chunk_rows + 2 x batch + distinct tokens) x 8 x lstm_dim floats, at most 256 MB per
    buffer (~200 MB on the original size at batch 32). Not thread-safe: give each thread its
    own FastBiLM (the `elmo` component runs one prediction at a time).
    """

    def __init__(
        self,
        bilm: BiLM,
        *,
        cache_size: int = 100_000,
        matmul_dtype: Optional[torch.dtype] = None,
        chunk_rows: int = 1024,
    ):
        super().__init__()
        self.bilm = bilm
        self.config = bilm.config
        self.cache = TokenVectorCache(cache_size)
        self.matmul_dtype = matmul_dtype
        self.chunk_rows = chunk_rows
        self._workspace = _Workspace()
        self._character_ids = CharacterIds(bilm.config.max_characters_per_token)
        self._lstm_weights: Optional[List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]] = None
        self._lstm_version: Optional[Tuple[int, ...]] = None

    @torch.no_grad()
    def forward_tokens(self, sentences: Sequence[Sequence[str]], state: Optional[LstmState] = None) -> BiLMOutput:
        """Run tokenised sentences (lists of token strings)."""
        return self.forward(torch.from_numpy(self._character_ids.batch(sentences)), state)

    @torch.no_grad()
    def forward(self, char_ids: torch.Tensor, state: Optional[LstmState] = None) -> BiLMOutput:
        cfg = self.config
        if char_ids.dim() != 3 or char_ids.shape[-1] != cfg.max_characters_per_token:
            raise ValueError(
                f"Expected character ids of shape (batch, tokens, {cfg.max_characters_per_token}), "
                f"got {tuple(char_ids.shape)}. Build them with spacy_elmo.chars.CharacterIds."
            )
        char_ids = char_ids.to(self.bilm.device)
        batch, n_tokens, _ = char_ids.shape
        mask = (char_ids > 0).any(dim=-1)
        lengths = mask.sum(dim=1)
        real_ids = char_ids[mask]  # (n_real, max_chars), row-major order
        n_real = real_ids.shape[0]
        # The distinct tokens' vectors, <S> and </S> among them, and each real token's row.
        table, table_index = self.distinct_vectors(torch.cat([real_ids, self.bilm.boundary_char_ids]))
        packing = _Packing(lengths + 2)
        sources = packing.sources(mask, table_index)

        if state is None:
            state = self.bilm.lstm.zero_state(batch, table)
        sorted_state = LstmState(state.hidden[:, :, packing.order], state.cell[:, :, packing.order])
        outputs, final_sorted = self._run_lstm(table, sources, packing.batch_sizes, sorted_state)
        inverse = packing.inverse_order
        final_state = LstmState(final_sorted.hidden[:, :, inverse], final_sorted.cell[:, :, inverse])

        # Packed position of each real token's forward (step k + 1) and backward (step n - k) output.
        rows = torch.nonzero(mask)
        row, k = rows[:, 0], rows[:, 1]
        sorted_row = inverse[row]
        fwd_pos = packing.offsets[k + 1] + sorted_row
        bwd_pos = packing.offsets[lengths[row] - k] + sorted_row
        layers = table.new_zeros(cfg.n_output_layers, batch, n_tokens, 2 * cfg.projection_dim)
        token_vectors = table[table_index[:n_real]]
        layers[0][mask] = torch.cat([token_vectors, token_vectors], dim=-1)
        for i, out in enumerate(outputs, start=1):
            layers[i][mask] = torch.cat([out[0, fwd_pos], out[1, bwd_pos]], dim=-1)
        return BiLMOutput(layers, mask, final_state)

    @torch.no_grad()
    def embed_char_ids(self, char_ids: torch.Tensor) -> torch.Tensor:
        """Char-CNN vectors (n, projection_dim) of (n, max_chars) real token ids."""
        table, index = self.distinct_vectors(char_ids)
        return table[index]

    @torch.no_grad()
    def distinct_vectors(self, char_ids: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Char-CNN vectors of the distinct rows of (n, max_chars) real token ids, and each
        row's index among them; cached across calls while the weights stay the same."""
        if char_ids.shape[0] == 0:
            empty = char_ids.new_zeros(0, self.config.projection_dim, dtype=self.bilm.dtype)
            return empty, char_ids.new_zeros(0, dtype=torch.long)
        unique, inverse = torch.unique(char_ids, dim=0, return_inverse=True)
        if self.cache.max_entries == 0:
            return self._encode(unique), inverse
        self.cache.check_weights(self.bilm.weights_version)
        keys = [row.tobytes() for row in unique.cpu().numpy()]
        found = [self.cache.get(key) for key in keys]
        missing = [i for i, vector in enumerate(found) if vector is None]
        if missing:
            computed = self._encode(unique[missing])
            for i, vector in zip(missing, computed):
                found[i] = vector
                self.cache.put(keys[i], vector.clone())  # a clone: a view would pin the batch
        return torch.stack(found), inverse

    def _encode(self, char_ids: torch.Tensor) -> torch.Tensor:
        encoder = self.bilm.char_encoder
        return encoder.transform(pool_by_length(encoder, char_ids))

    def _weights(self) -> List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
        """Per layer: input weights, biases with the forget bias added, recurrent weights and
        projections, in matmul_dtype. Gate columns are reordered from i, j, f, o to i, f, o, j
        (one sigmoid and one tanh per step)."""
        lstm = self.bilm.lstm
        version = self.bilm.weights_version
        if self._lstm_weights is None or version != self._lstm_version:
            dtype = self.matmul_dtype or lstm.biases[0].dtype
            H = self.config.lstm_dim
            i, j, f, o = (torch.arange(k * H, (k + 1) * H) for k in range(4))
            order = torch.cat([i, f, o, j]).to(lstm.biases[0].device)
            weights = []
            for layer in range(self.config.n_layers):
                bias = lstm.biases[layer][:, order].clone()
                bias[:, H : 2 * H] += FORGET_BIAS
                hidden = lstm.hidden_weights[layer][:, :, order].to(dtype)
                input_weights = lstm.input_weights[layer][:, :, order].to(dtype)
                weights.append((input_weights, bias, hidden, lstm.projections[layer].to(dtype)))
            self._lstm_weights, self._lstm_version = weights, version
        return self._lstm_weights

    def _run_lstm(
        self, table: torch.Tensor, sources: torch.Tensor, batch_sizes: List[int], state: LstmState
    ) -> Tuple[List[torch.Tensor], LstmState]:
        """Both directions over time-major packed steps, rows sorted by length so the active
        rows at each step are a prefix. The first layer reads rows of ``table`` (n, P) at
        ``sources`` (2, n_packed): its input gates are computed once per table row, as they
        depend on the token alone. A row's final state is taken at the step after which the
        batch shrinks past it. Scratch tensors come from the workspace (no allocation per step)."""
        cfg = self.config
        H, P = cfg.lstm_dim, cfg.projection_dim
        space = self._workspace
        n_packed = sources.shape[1]
        ends = list(itertools.accumulate(batch_sizes))
        outputs: List[torch.Tensor] = []
        final_h, final_c = torch.empty_like(state.hidden), torch.empty_like(state.cell)
        x = table
        for layer, (w_in, bias, w_h, w_p) in enumerate(self._weights()):
            if layer == 0:
                table_gates = space.get("table_gates", (2, table.shape[0], 4 * H), table)
                self._product(table.expand(2, -1, -1), w_in, out=table_gates, multiple=_ROWS).add_(bias[:, None, :])
                flat_gates = table_gates.view(-1, 4 * H)
                gate_rows = sources + torch.tensor([[0], [table.shape[0]]], device=sources.device)
            chunk_start = chunk_end = 0
            h, c = state.hidden[:, layer].contiguous(), state.cell[:, layer]
            out = table.new_empty(2, n_packed, P)
            start = 0
            for t, (size, end) in enumerate(zip(batch_sizes, ends)):
                gates = space.get("step_gates", (2, size, 4 * H), table)
                if layer == 0:
                    torch.index_select(flat_gates, 0, gate_rows[:, start:end].reshape(-1), out=gates.view(-1, 4 * H))
                else:
                    if end > chunk_end:  # input gates of the next steps, up to chunk_rows rows
                        chunk_start = start
                        chunk_end = max(e for e in ends[t:] if e - start <= self.chunk_rows or e == end)
                        chunk = space.get("chunk_gates", (2, chunk_end - chunk_start, 4 * H), table)
                        self._product(x[:, chunk_start:chunk_end], w_in, out=chunk, multiple=_ROWS)
                        chunk.add_(bias[:, None, :])
                    gates.copy_(chunk[:, start - chunk_start : end - chunk_start])
                self._add_product(gates, h[:, :size], w_h, _STEP_ROWS)
                gates[..., : 3 * H].sigmoid_()
                gates[..., 3 * H :].tanh_()
                i, f, o, j = gates.split(H, dim=-1)
                c_next = space.get(f"cell{t % 2}", (2, size, H), table)
                torch.mul(f, c[:, :size], out=c_next).addcmul_(i, j)
                if cfg.cell_clip is not None:
                    c_next.clamp_(-cfg.cell_clip, cfg.cell_clip)
                cell_out = space.get("cell_out", (2, size, H), table)
                torch.tanh(c_next, out=cell_out).mul_(o)
                h = self._product(
                    cell_out, w_p, out=space.get(f"hidden{t % 2}", (2, size, P), table), multiple=_STEP_ROWS
                )
                if cfg.proj_clip is not None:
                    h.clamp_(-cfg.proj_clip, cfg.proj_clip)
                out[:, start:end] = h
                c = c_next
                remaining = batch_sizes[t + 1] if t + 1 < len(batch_sizes) else 0
                if remaining < size:
                    final_h[:, layer, remaining:size] = h[:, remaining:]
                    final_c[:, layer, remaining:size] = c[:, remaining:]
                start = end
            if cfg.use_skip_connections and layer > 0:
                out.add_(x)
            outputs.append(out)
            x = out
        return outputs, LstmState(final_h, final_c)

    def _product(self, a: torch.Tensor, b: torch.Tensor, *, out: torch.Tensor, multiple: int = 1) -> torch.Tensor:
        """out = a @ b (batched), in matmul_dtype."""
        if self.matmul_dtype is None:
            return torch.bmm(a, b, out=out)
        return out.copy_(torch.bmm(self._low(a, multiple), b)[:, : a.shape[1]])

    def _add_product(self, target: torch.Tensor, a: torch.Tensor, b: torch.Tensor, multiple: int = 1) -> None:
        """target += a @ b (batched), in matmul_dtype."""
        if self.matmul_dtype is None:
            target.baddbmm_(a, b)
        else:
            target.add_(torch.bmm(self._low(a, multiple), b)[:, : a.shape[1]])

    def _low(self, a: torch.Tensor, multiple: int) -> torch.Tensor:
        """a (batch, rows, k) in matmul_dtype, its rows zero-padded to a multiple of ``multiple``
        (see pad_rows)."""
        return pad_rows(a.to(self.matmul_dtype), multiple, dim=1)


def pad_rows(x: torch.Tensor, multiple: int, value: float = 0.0, dim: int = 0) -> torch.Tensor:
    """x with entries of ``value`` appended along ``dim`` up to a multiple of ``multiple``.
    oneDNN, which runs torch's bf16 matmuls on CPU, builds and keeps a kernel (~1 MB) per
    operand shape: where a row count changes from call to call, padding keeps the shapes few."""
    extra = -x.shape[dim] % multiple
    if not extra:
        return x
    shape = list(x.shape)
    shape[dim] = extra
    return torch.cat([x, x.new_full(shape, value)], dim=dim)


class _Workspace:
    """Named scratch tensors kept between calls, so that the LSTM's steps make no fresh large
    allocations (each would be mapped and page-faulted anew). A tensor grows to the largest
    request up to ``max_bytes``; larger requests get a fresh tensor that is not kept."""

    def __init__(self, max_bytes: int = 256 * 2**20) -> None:
        self.max_bytes = max_bytes
        self._flat: Dict[str, torch.Tensor] = {}

    def get(self, name: str, shape: Tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
        """A contiguous tensor of ``shape`` with like's dtype and device (contents undefined)."""
        size = math.prod(shape)
        if size * like.element_size() > self.max_bytes:
            return like.new_empty(shape)
        flat = self._flat.get(name)
        if flat is None or flat.numel() < size or flat.dtype != like.dtype or flat.device != like.device:
            flat = self._flat[name] = like.new_empty(size)
        return flat[:size].view(shape)


class _Packing:
    """Rows sorted by decreasing sequence length, laid out time-major without padding:
    step t holds the first batch_sizes[t] sorted rows, starting at offsets[t]."""

    def __init__(self, seq_lengths: torch.Tensor):
        self.order = torch.argsort(seq_lengths, descending=True, stable=True)
        self.inverse_order = torch.argsort(self.order)
        self.seq_lengths = seq_lengths[self.order]
        steps = int(self.seq_lengths[0]) if len(self.seq_lengths) else 0
        self.active = torch.arange(steps, device=seq_lengths.device)[:, None] < self.seq_lengths[None, :]  # (S, B)
        sizes = self.active.sum(dim=1)
        self.batch_sizes: List[int] = sizes.tolist()
        self.offsets = torch.cumsum(sizes, dim=0) - sizes

    def sources(self, mask: torch.Tensor, table_index: torch.Tensor) -> torch.Tensor:
        """Rows of the input table read at every packed step of each direction, (2, n_packed).
        mask (B, T) marks the real tokens (each sequence is its tokens + <S> and </S>);
        table_index holds the real tokens' rows in row-major order, then <S>'s and </S>'s.
        Forward reads <S> t_1..t_n </S>, backward </S> t_n..t_1 <S>."""
        n_real = table_index.shape[0] - 2
        bos, eos = table_index[n_real:].tolist()
        token_index = torch.zeros(mask.shape, dtype=torch.long, device=mask.device)
        token_index[mask] = table_index[:n_real]
        padded = torch.cat([token_index[self.order], token_index.new_zeros(mask.shape[0], 2)], dim=1)
        lengths = self.seq_lengths - 2
        t = torch.arange(self.active.shape[0], device=mask.device)[:, None]  # (S, 1)
        n = lengths[None, :]  # (1, B)
        fwd_token = padded.gather(1, (t - 1).clamp(min=0).expand(-1, len(lengths)).t().contiguous()).t()
        bwd_token = padded.gather(1, (n - t).clamp(min=0).t().contiguous()).t()
        fwd = torch.where(t == 0, bos, torch.where(t == n + 1, eos, fwd_token))
        bwd = torch.where(t == 0, eos, torch.where(t == n + 1, bos, bwd_token))
        return torch.stack([fwd[self.active], bwd[self.active]])


def pool_by_length(encoder: nn.Module, char_ids: torch.Tensor) -> torch.Tensor:
    """pool_characters in two groups, short and long tokens, split where it saves the most
    character windows: a batch's few long tokens no longer widen every token's slots."""
    lengths = (char_ids != _PADDING_CHAR).sum(dim=1)
    split = _best_split(lengths)
    if split is None:
        return pool_characters(encoder, char_ids)
    short = lengths <= split
    pooled = char_ids.new_empty((char_ids.shape[0], encoder.config.n_filters), dtype=encoder.projection.weight.dtype)
    pooled[short] = pool_characters(encoder, char_ids[short])
    pooled[~short] = pool_characters(encoder, char_ids[~short])
    return pooled


def _best_split(lengths: torch.Tensor) -> Optional[int]:
    """The length L minimising the filter windows computed (longest token of the group + 1
    per token) when tokens of length <= L and > L run apart; None when no split saves at
    least a fifth of them."""
    counts = torch.bincount(lengths).tolist()
    total, longest = len(lengths), len(counts) - 1
    whole = total * (longest + 1)
    best, best_cost, below = None, whole, 0
    for length, count in enumerate(counts[:-1]):
        below += count
        cost = below * (length + 1) + (total - below) * (longest + 1)
        if count and cost < best_cost:
            best, best_cost = length, cost
    return best if best_cost <= 0.8 * whole else None


def pool_characters(encoder: nn.Module, char_ids: torch.Tensor) -> torch.Tensor:
    """CharacterEncoder.pool on (n, max_chars) ids with fewer character slots, all filters at
    once, and no matmul over windows: equal to it up to float rounding, gradients included."""
    cfg = encoder.config
    widest = max(width for width, _ in cfg.filters)
    token_length = int((char_ids != _PADDING_CHAR).sum(dim=1).max())
    slots = token_length + widest
    if slots <= cfg.max_characters_per_token:
        # Every width-w window content of every token appears among the first token_length + 1
        # starts, all-padding included; filters zero-padded to the widest width agree there.
        table = _window_table(encoder, widest)
        pooled = _CharWindowMax.apply(char_ids[:, :slots], table, widest)
        pooled = pooled + torch.cat([conv.bias for conv in encoder.convolutions])
    else:
        chars = encoder.char_embedding(char_ids)
        pooled = torch.cat([_conv_max(chars, conv) for conv in encoder.convolutions], dim=-1)
    return encoder.activation(pooled)


def _window_table(encoder: nn.Module, widest: int) -> torch.Tensor:
    """Each character's contribution to every filter at every offset of its window: row
    k * n_characters + c holds embedding(c) . filter[:, :, k] for all filters (zero past a
    filter's width), (widest * n_characters, n_filters). A window's convolution is the sum of
    its characters' rows: a gather-add, where the convolution is a matmul over all windows."""
    embedding = encoder.char_embedding.weight  # (n_characters, dim)
    filters = _stacked_filters(encoder, widest).view(embedding.shape[1], widest, -1)  # (dim, widest, n_filters)
    return torch.einsum("cd,dkf->kcf", embedding, filters).reshape(-1, filters.shape[-1])


class _CharWindowMax(torch.autograd.Function):
    """Max over window starts of each window's filter responses, from the window table:
    (n, slots) ids -> (n, n_filters). The backward adds each maximum's gradient to the table
    rows of its window only (ties are between identical windows: same rows, same result)."""

    @staticmethod
    def forward(ctx, char_ids: torch.Tensor, table: torch.Tensor, widest: int) -> torch.Tensor:
        n_characters = table.shape[0] // widest
        offsets = torch.arange(widest, device=char_ids.device) * n_characters
        rows = char_ids.unfold(1, widest, 1) + offsets  # (n, starts, widest) table rows
        responses = nn.functional.embedding_bag(rows.reshape(-1, widest), table, mode="sum")
        pooled, best = responses.view(rows.shape[0], rows.shape[1], -1).max(dim=1)
        ctx.save_for_backward(rows, best)
        ctx.table_shape = table.shape
        return pooled

    @staticmethod
    def backward(ctx, d_pooled: torch.Tensor):
        rows, best = ctx.saved_tensors
        n, _, widest = rows.shape
        n_filters = best.shape[1]
        d_table = d_pooled.new_zeros(ctx.table_shape)
        filters = torch.arange(n_filters, device=best.device)
        for k in range(widest):  # the table row of each maximum's k-th character
            row = rows[:, :, k].gather(1, best)  # (n, n_filters)
            d_table.view(-1).index_add_(0, (row * n_filters + filters).view(-1), d_pooled.reshape(-1))
        return None, d_table, None


def _stacked_filters(encoder: nn.Module, widest: int) -> torch.Tensor:
    """All convolution kernels as one (dim * widest, n_filters) matrix, zero past each width."""
    dim = encoder.config.char_embedding_dim
    blocks = []
    for conv in encoder.convolutions:
        n, _, width = conv.weight.shape
        kernel = conv.weight.new_zeros(n, dim, widest)
        kernel[:, :, :width] = conv.weight
        blocks.append(kernel.reshape(n, dim * widest))
    return torch.cat(blocks).t()


def _conv_max(chars: torch.Tensor, conv: nn.Conv1d) -> torch.Tensor:
    n, _, width = conv.weight.shape
    windows = chars.unfold(1, width, 1).flatten(2)
    return torch.matmul(windows, conv.weight.reshape(n, -1).t()).max(dim=1).values + conv.bias
