"""What each fast-path lever buys: the char CNN and the LSTM stack timed on their own, exact
implementation against the fast one step by step, on bench_bilm.py's 32 sentences.

    python benchmarks/bench_levers.py [--sizes small original] [--repeats 7] [--threads 2]

Prints median milliseconds per batch; the load average is printed alongside.
"""

import argparse
import statistics
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch
from bench_bilm import BATCH_SIZE, N_WARM_SENTENCES, load, make_model, read_sentences

from spacy_elmo.chars import CharacterIds
from spacy_elmo.model import BiLM
from spacy_elmo.model.fast import FastBiLM, _conv_max, _Packing, pool_by_length, pool_characters

Runs = Dict[str, Tuple[Callable[[], object], Optional[Callable[[], None]]]]


def median_ms(runs: Runs, repeats: int) -> Dict[str, float]:
    """Interleaved timings: every run once per round, so load changes hit all alike; a run's
    set-up step (if any) goes before each call, untimed."""
    seconds: Dict[str, List[float]] = {name: [] for name in runs}
    for _ in range(repeats + 1):  # the first round is the warm-up
        for name, (run, setup) in runs.items():
            if setup is not None:
                setup()
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
    seconds = {name: times[1:] for name, times in seconds.items()}
    return {name: 1000 * statistics.median(times) for name, times in seconds.items()}


def char_cnn_runs(fast: FastBiLM, token_ids: torch.Tensor, warm_ids: torch.Tensor) -> Runs:
    encoder = fast.bilm.char_encoder

    def untrimmed_per_filter() -> torch.Tensor:
        chars = encoder.char_embedding(token_ids)
        return encoder.transform(
            encoder.activation(torch.cat([_conv_max(chars, conv) for conv in encoder.convolutions], dim=-1))
        )

    def distinct_once(pool: Callable[[torch.nn.Module, torch.Tensor], torch.Tensor]) -> Callable[[], torch.Tensor]:
        def run() -> torch.Tensor:
            unique, inverse = torch.unique(token_ids, dim=0, return_inverse=True)
            return encoder.transform(pool(encoder, unique))[inverse]

        return run

    def warm_cache() -> None:
        fast.cache.clear()
        fast.embed_char_ids(warm_ids)

    return {
        "char CNN: Conv1d, 50 slots (exact path)": (lambda: encoder(token_ids), None),
        "  unfold + matmul per filter, 50 slots": (untrimmed_per_filter, None),
        "  + slots trimmed, one matmul": (lambda: encoder.transform(pool_characters(encoder, token_ids)), None),
        "  + each distinct token once": (distinct_once(pool_characters), None),
        "  + short and long tokens apart": (distinct_once(pool_by_length), None),
        "  + cache warm from 256 other sentences": (lambda: fast.embed_char_ids(token_ids), warm_cache),
    }


def lstm_runs(model: BiLM, fast: FastBiLM, bf16: FastBiLM, char_ids: torch.Tensor) -> Runs:
    """The exact stack on padded, masked inputs against the packed fast recurrence, first
    with every packed step reading its own input row, then with the first layer's input gates
    computed once per distinct token (the fast path as shipped)."""
    mask = (char_ids > 0).any(dim=-1)
    lengths = mask.sum(dim=1)
    steps = int(lengths.max()) + 2
    batch, P = char_ids.shape[0], model.config.projection_dim
    padded = torch.randn(2, batch, steps, P)
    seq_mask = torch.arange(steps)[None, :] < (lengths + 2)[:, None]
    packing = _Packing(lengths + 2)
    n_packed = sum(packing.batch_sizes)
    every_row = torch.stack([torch.arange(n_packed), torch.arange(n_packed, 2 * n_packed)])
    every_table = torch.randn(2 * n_packed, P)
    distinct, index = torch.unique(torch.cat([char_ids[mask], model.boundary_char_ids]), dim=0, return_inverse=True)
    sources = packing.sources(mask, index)
    table = torch.randn(len(distinct), P)
    state = model.lstm.zero_state(batch, table)
    return {
        "LSTM: padded, masked steps (exact path)": (lambda: model.lstm(padded, seq_mask), None),
        "  packed by length, scratch tensors reused": (
            lambda: fast._run_lstm(every_table, every_row, packing.batch_sizes, state),
            None,
        ),
        "  + first layer's gates per distinct token": (
            lambda: fast._run_lstm(table, sources, packing.batch_sizes, state),
            None,
        ),
        "  same, bf16 matmuls": (lambda: bf16._run_lstm(table, sources, packing.batch_sizes, state), None),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["small", "original"])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sentences, source = read_sentences(BATCH_SIZE)
    warm_sentences, _ = read_sentences(N_WARM_SENTENCES, skip=BATCH_SIZE)
    print(
        f"torch {torch.__version__}, {args.threads} threads; {len(sentences)} sentences from {source}; median of {args.repeats}"
    )
    for size in args.sizes:
        model = make_model(size)
        chars = CharacterIds(model.config.max_characters_per_token)
        char_ids = torch.from_numpy(chars.batch(sentences))
        token_ids = char_ids[(char_ids > 0).any(dim=-1)]
        warm = torch.from_numpy(chars.batch(warm_sentences))
        warm_ids = warm[(warm > 0).any(dim=-1)]
        fast, bf16 = FastBiLM(model), FastBiLM(model, matmul_dtype=torch.bfloat16)
        n_unique = len(torch.unique(token_ids, dim=0))
        print(f"\n[{size}] {len(token_ids)} tokens, {n_unique} distinct; {load()}")
        with torch.no_grad():
            runs = {**char_cnn_runs(fast, token_ids, warm_ids), **lstm_runs(model, fast, bf16, char_ids)}
            timings = median_ms(runs, args.repeats)
        for name, ms in timings.items():
            print(f"  {name:<44}{ms:>9.1f} ms")
        print(f"  {load()}")


if __name__ == "__main__":
    main()
