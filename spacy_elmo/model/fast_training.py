"""Training fast path of the biLM: BiLM.embed_tokens and BidirectionalLstmStack.forward with
the same outputs and gradients (fp32, up to float rounding) for less work.

- Token vectors: the char CNN over trimmed character slots, short and long tokens in two
  groups, all filters as one matmul, max-pooling whose backward touches only the argmax
  (model/fast.py's pooling, differentiable).
- LSTM: each layer is one autograd Function whose backward is written out (BPTT): the
  per-step work is two small matmuls each way and fused elementwise math; the weight
  gradients are one large matmul each over all steps; no per-step autograd graph.
- ``matmul_dtype=torch.bfloat16`` runs the matmuls in bf16 (fp32 master weights, cell
  state and gradients' accumulation outside the matmuls): ~2-3x faster matmuls on CPUs with
  avx512_bf16 or AMX, and on GPUs; not within 1e-5 of fp32.
"""

from typing import List, Optional, Tuple

import torch
from torch import nn

from .fast import pad_rows, pool_by_length
from .lstm import FORGET_BIAS, BidirectionalLstmStack, LstmState


def token_vectors(
    encoder: nn.Module, char_ids: torch.Tensor, matmul_dtype: Optional[torch.dtype] = None, row_multiple: int = 1
) -> torch.Tensor:
    """CharacterEncoder.forward on (n, max_chars) real token ids, differentiable. The highway
    and projection run over the rows padded with zeros to a multiple of ``row_multiple``
    (the same vectors and gradients): fewer distinct matmul shapes, see pad_rows."""
    pooled = pool_by_length(encoder, char_ids)
    n = pooled.shape[0]
    pooled = pad_rows(pooled, row_multiple)
    if matmul_dtype is None:
        return encoder.transform(pooled)[:n]
    with torch.autocast(pooled.device.type, dtype=matmul_dtype):
        vectors = encoder.transform(pooled)
    return vectors[:n].float()


def lstm_stack(
    lstm: BidirectionalLstmStack,
    inputs: torch.Tensor,
    mask: Optional[torch.Tensor] = None,
    state: Optional[LstmState] = None,
    matmul_dtype: Optional[torch.dtype] = None,
) -> Tuple[List[torch.Tensor], LstmState]:
    """BidirectionalLstmStack.forward: inputs (2, batch, steps, P); mask (batch, steps) bool
    or None when every step is real. Returns each layer's outputs (2, batch, steps, P) and
    the state after each row's last real step."""
    cfg = lstm.config
    H = cfg.lstm_dim
    _, batch, steps, _ = inputs.shape
    if state is None:
        state = lstm.zero_state(batch, inputs)
    if mask is not None and bool(mask.all()):
        mask = None
    step_mask = None if mask is None else mask.t()[:, None, :, None].to(inputs.dtype)  # (steps, 1, batch, 1)
    order = torch.cat([torch.arange(k * H, (k + 1) * H) for k in (0, 2, 3, 1)]).to(inputs.device)  # i, f, o, j
    forget = torch.zeros(4 * H, dtype=inputs.dtype, device=inputs.device)
    forget[H : 2 * H] = FORGET_BIAS
    clips = (cfg.cell_clip, cfg.proj_clip)
    x = inputs.transpose(1, 2)  # (2, steps, batch, P)
    outputs, final_h, final_c = [], [], []
    for layer in range(cfg.n_layers):
        out, h, c = _LstmLayer.apply(
            x,
            state.hidden[:, layer],
            state.cell[:, layer],
            lstm.input_weights[layer][:, :, order],
            lstm.biases[layer][:, order] + forget,
            lstm.hidden_weights[layer][:, :, order],
            lstm.projections[layer],
            step_mask,
            clips,
            matmul_dtype,
        )
        if cfg.use_skip_connections and layer > 0:
            out = out + x
        outputs.append(out.transpose(1, 2))
        final_h.append(h)
        final_c.append(c)
        x = out
    return outputs, LstmState(torch.stack(final_h, dim=1), torch.stack(final_c, dim=1))


class _LstmLayer(torch.autograd.Function):
    """One LSTM layer, both directions, time-major. Gates in i, f, o, j order with the
    forget bias already in the bias. x (2, steps, batch, P); returns the outputs (2, steps,
    batch, P), zero at padding, and the final hidden and cell states.

    With ``dtype`` (bf16) every matmul operand is kept in that dtype from the start (the
    memory o * tanh(c) and the gates' gradients are stored in it, weights cast once per
    call) and results are added into fp32 tensors; cell state, gates and element-wise math
    stay fp32."""

    @staticmethod
    def forward(ctx, x, h0, c0, w_in, bias, w_h, w_p, step_mask, clips, dtype):
        _, steps, batch, P = x.shape
        H = w_p.shape[1]
        low = dtype or x.dtype  # the matmuls' operand dtype
        cell_clip, proj_clip = clips
        w_h_low, w_p_low = w_h.to(low), w_p.to(low)
        x_flat = x.reshape(2, steps * batch, P)
        if dtype is None:  # the bias copied into the output, the matmul added in place
            gates = torch.baddbmm(bias[:, None, :], x_flat, w_in).view(2, steps, batch, 4 * H)
        else:
            gates = torch.add(
                bias[:, None, None, :], torch.bmm(x_flat.to(low), w_in.to(low)).view(2, steps, batch, 4 * H)
            )
        cells = x.new_empty(2, steps + 1, batch, H)  # cells[:, t] is the state entering step t
        hiddens = x.new_empty(2, steps + 1, batch, P)
        tanh_cells = x.new_empty(2, steps, batch, H)  # tanh(c) after each step, for the backward
        memory = x.new_empty(2, steps, batch, H, dtype=low)  # o * tanh(c): the projection's input
        out = x.new_empty(2, steps, batch, P)
        cell_kept = torch.ones(2, steps, batch, H, dtype=torch.bool, device=x.device)
        proj_kept = torch.ones(2, steps, batch, P, dtype=torch.bool, device=x.device)
        cells[:, 0], hiddens[:, 0] = c0, h0
        for t in range(steps):
            g = gates[:, t]
            if dtype is None:
                g.baddbmm_(hiddens[:, t], w_h)
            else:
                g.add_(torch.bmm(hiddens[:, t].to(low), w_h_low))
            g[..., : 3 * H].sigmoid_()
            g[..., 3 * H :].tanh_()
            i, f, o, j = g.split(H, dim=-1)
            c = torch.mul(f, cells[:, t], out=cells[:, t + 1] if step_mask is None else None).addcmul_(i, j)
            if cell_clip is not None:
                torch.logical_and(c >= -cell_clip, c <= cell_clip, out=cell_kept[:, t])
                c.clamp_(-cell_clip, cell_clip)
            torch.mul(torch.tanh(c, out=tanh_cells[:, t]), o, out=memory[:, t])
            h = torch.bmm(memory[:, t], w_p_low).to(x.dtype)
            if proj_clip is not None:
                torch.logical_and(h >= -proj_clip, h <= proj_clip, out=proj_kept[:, t])
                h.clamp_(-proj_clip, proj_clip)
            if step_mask is None:  # c is cells[:, t + 1] already
                hiddens[:, t + 1], out[:, t] = h, h
            else:
                keep = step_mask[t]
                torch.mul(h, keep, out=out[:, t])
                cells[:, t + 1] = torch.lerp(cells[:, t], c, keep)
                hiddens[:, t + 1] = torch.lerp(hiddens[:, t], h, keep)
        ctx.save_for_backward(
            x_flat, w_in, w_h, w_p, gates, cells, tanh_cells, hiddens, memory, cell_kept, proj_kept, step_mask
        )
        ctx.settings = (cell_clip is not None, proj_clip is not None, dtype, steps)
        return out, hiddens[:, steps].clone(), cells[:, steps].clone()

    @staticmethod
    def backward(ctx, d_out, d_h_final, d_c_final):
        x_flat, w_in, w_h, w_p, gates, cells, tanh_cells, hiddens, memory, cell_kept, proj_kept, step_mask = (
            ctx.saved_tensors
        )
        clip_cell, clip_proj, dtype, steps = ctx.settings
        _, _, batch, H = memory.shape
        P = x_flat.shape[-1]
        low = memory.dtype
        w_h_t, w_p_t = w_h.transpose(1, 2).to(low), w_p.transpose(1, 2).to(low)
        d_gates = torch.empty(gates.shape, dtype=low, device=gates.device)  # the matmuls' operand
        d_proj = x_flat.new_empty(2, steps, batch, P, dtype=low)  # gradient at the projection's output
        d_bias = x_flat.new_zeros(2, 4 * H)
        dh = d_h_final.clone() if d_h_final is not None else x_flat.new_zeros(2, batch, P)
        dc = d_c_final.clone() if d_c_final is not None else x_flat.new_zeros(2, batch, H)
        for t in reversed(range(steps)):
            g = gates[:, t]
            i, f, o, j = g.split(H, dim=-1)
            if step_mask is None:
                dh_new = dh.add_(d_out[:, t])
                dc_new = dc
                dh_carry = dc_carry = None
            else:
                keep = step_mask[t]
                dh_new = (dh + d_out[:, t]) * keep
                dc_new = dc * keep
                dh_carry, dc_carry = dh - dh * keep, dc - dc * keep
            if clip_proj:
                dh_new = dh_new * proj_kept[:, t]
            d_proj[:, t] = dh_new
            d_memory = torch.bmm(d_proj[:, t] if dtype is not None else dh_new, w_p_t)
            tanh_c = tanh_cells[:, t]  # at padding: multiplied by 0
            d_cell = dc_new + d_memory * o * (1 - tanh_c * tanh_c)
            if clip_cell:
                d_cell = d_cell * cell_kept[:, t]
            dg = d_gates[:, t]
            di, df, do, dj = dg.split(H, dim=-1)
            torch.mul(d_cell * j, i * (1 - i), out=di)
            torch.mul(d_cell * cells[:, t], f * (1 - f), out=df)
            torch.mul(d_memory * tanh_c, o * (1 - o), out=do)
            torch.mul(d_cell * i, 1 - j * j, out=dj)
            dc = d_cell * f
            d_bias += dg.sum(dim=1, dtype=d_bias.dtype)
            dh = torch.bmm(dg, w_h_t).to(x_flat.dtype)
            if dh_carry is not None:
                dh.add_(dh_carry)
                dc.add_(dc_carry)
        flat_gates = d_gates.view(2, steps * batch, 4 * H)
        d_x = torch.bmm(flat_gates, w_in.transpose(1, 2).to(low)).view(2, steps, batch, P).to(x_flat.dtype)
        d_w_in = torch.bmm(x_flat.transpose(1, 2).to(low), flat_gates).to(w_in.dtype)
        d_w_h = torch.bmm(hiddens[:, :steps].reshape(2, steps * batch, P).transpose(1, 2).to(low), flat_gates).to(
            w_h.dtype
        )
        d_w_p = torch.bmm(memory.view(2, steps * batch, H).transpose(1, 2), d_proj.view(2, steps * batch, P)).to(
            w_p.dtype
        )
        return d_x, dh, dc, d_w_in, d_bias, d_w_h, d_w_p, None, None, None
