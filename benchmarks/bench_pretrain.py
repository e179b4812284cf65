"""Pretraining throughput: training tokens/s per preset on this machine's CPU threads, the
exact (reference) path beside the fast path in fp32 and with bf16 matmuls, in one run.

    python benchmarks/bench_pretrain.py [--presets tiny small] [--threads 2] [--steps 5] [--batch-size 128]

Trains on the first lines of ../shared/data/lm/news.train.txt.gz (or a generated text when
that is absent) with each preset's .cfg (batch and negatives overridable); each path starts
from the same weights and data. Also prints the model's FLOPs per token and the share of the
measured matmul throughput reached. Prints figures only.
"""

import argparse
import gzip
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

from spacy_elmo.model import BiLMConfig
from spacy_elmo.pretrain import load_settings
from spacy_elmo.pretrain.distributed import Processes
from spacy_elmo.pretrain.train import Trainer, bf16_matmuls

REPO = Path(__file__).parents[1]
NEWS = REPO / "../shared/data/lm/news.train.txt.gz"
PATHS = {"exact": (False, False), "fast fp32": (True, False), "fast bf16": (True, True)}


def forward_flops_per_token(config: BiLMConfig, n_negatives: int) -> dict:
    """Multiply-adds x 2 of one token's forward pass on the exact path, by part (the char CNN
    once per token over all character slots, the LSTMs and the softmax once per direction)."""
    c, F, P, H = config, config.n_filters, config.projection_dim, config.lstm_dim
    conv = sum(2 * n * w * c.char_embedding_dim * (c.max_characters_per_token - w + 1) for w, n in c.filters)
    cnn = conv + c.n_highway * 2 * (2 * F * F) + 2 * F * P
    lstm = 2 * c.n_layers * 2 * (P * 4 * H + P * 4 * H + H * P)
    softmax = 2 * 2 * P * (n_negatives + 1)
    return {"char_cnn": cnn, "lstm": lstm, "softmax": softmax}


def matmul_flops_per_second(dtype: torch.dtype = torch.float32, n: int = 1024, repeats: int = 10) -> float:
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    torch.mm(a, b)
    best = min(_timed(lambda: torch.mm(a, b)) for _ in range(repeats))
    return 2 * n**3 / best


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def training_text(folder: Path, n_lines: int) -> Path:
    path = folder / "text.txt"
    if NEWS.exists():
        with gzip.open(NEWS, "rt", encoding="utf-8") as f:
            path.write_text("".join(itertools.islice(f, n_lines)), encoding="utf-8")
    else:
        words = "the of and to in a is that for it as was with be by on not he this are".split()
        path.write_text(
            "\n".join(" ".join(words[(i * 7 + j) % len(words)] for j in range(25)) + " ." for i in range(n_lines))
        )
    return path


def tokens_per_second(settings, folder: Path, steps: int) -> float:
    trainer = Trainer(settings, folder, Processes(0, 1, torch.device("cpu")))
    for _ in range(2):
        trainer.train_step()
    start, tokens = time.perf_counter(), 0
    for _ in range(steps):
        tokens += trainer.train_step()[1]
    return tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["tiny", "small"])
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per preset and path (after 2 warm-up steps)")
    parser.add_argument("--batch-size", type=int, default=128, help="rows per step (data.batch_size)")
    parser.add_argument(
        "--lines", type=int, default=8000, help="lines of training text (the vocabulary comes from them)"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if "fast bf16" in args.paths and bf16_matmuls("auto", torch.device("cpu")) is None:
        print("this CPU has no fast bf16 matmuls (AMX or avx512_bf16): the bf16 path is skipped")
        args.paths.remove("fast bf16")
    fp32, bf16 = matmul_flops_per_second(), matmul_flops_per_second(torch.bfloat16)
    print(
        f"threads: {args.threads}  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
        f"matmul 1024^3: fp32 {fp32 / 1e9:.1f}, bf16 {bf16 / 1e9:.1f} GFLOP/s  text: {'news.train' if NEWS.exists() else 'generated'}"
    )
    print(
        f"{'preset':>8} {'rows x unroll':>13} {'negatives':>9} {'path':>10} {'tokens/s':>9} {'vs exact':>8} {'exact-path GFLOP/s':>18}  forward MFLOP/token by part"
    )
    with tempfile.TemporaryDirectory() as tmp:
        text = training_text(Path(tmp), args.lines)
        for name in args.presets:
            rates = {}
            for path in args.paths:
                fast, mixed = PATHS[path]
                overrides = {
                    "paths.train": str(text), "system.threads": args.threads, "training.progress_bar": False,
                    "data.batch_size": args.batch_size, "training.resume": False,
                    "system.fast_path": fast, "system.mixed_precision": mixed,
                }  # fmt: skip
                settings = load_settings(REPO / "project" / "configs" / f"pretrain_{name}.cfg", overrides)
                rates[path] = rate = tokens_per_second(settings, Path(tmp) / name, args.steps)
                n_negatives = settings.objective.n_negatives
                parts = forward_flops_per_token(settings.model, n_negatives)
                train_flops = 3 * sum(parts.values())  # forward + backward (about twice the forward)
                ratio = f"{rate / rates['exact']:.2f}x" if "exact" in rates else "-"
                shown = ", ".join(f"{k} {v / 1e6:.1f}" for k, v in parts.items())
                print(
                    f"{name:>8} {f'{args.batch_size} x {settings.data.unroll_steps}':>13} {n_negatives:>9} {path:>10} {rate:>9.0f} "
                    f"{ratio:>8} {rate * train_flops / 1e9:>18.1f}  {shown}"
                )
                sys.stdout.flush()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
