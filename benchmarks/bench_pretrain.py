"""Pretraining throughput: training tokens/s per preset on this machine's CPU threads, the
model's FLOPs per token, and the share of the measured matmul throughput it reaches.

    python benchmarks/bench_pretrain.py [--presets tiny small] [--threads 2] [--steps 5]

Trains on the first lines of ../shared/data/lm/news.train.txt.gz (or a generated text when
that is absent) with each preset's .cfg (batch and negatives overridable). Prints figures only.
"""
import argparse
import gzip
import itertools
import sys
import tempfile
import time
from pathlib import Path

import torch

from spacy_elmo.model import BiLMConfig
from spacy_elmo.pretrain import load_settings
from spacy_elmo.pretrain.distributed import Processes
from spacy_elmo.pretrain.train import Trainer

REPO = Path(__file__).parents[1]
NEWS = REPO / "../shared/data/lm/news.train.txt.gz"


def forward_flops_per_token(config: BiLMConfig, n_negatives: int) -> dict:
    """Multiply-adds x 2 of one token's forward pass, by part (the char CNN runs once per
    token, the LSTMs and the softmax once per direction)."""
    c, F, P, H = config, config.n_filters, config.projection_dim, config.lstm_dim
    conv = sum(2 * n * w * c.char_embedding_dim * (c.max_characters_per_token - w + 1) for w, n in c.filters)
    cnn = conv + c.n_highway * 2 * (2 * F * F) + 2 * F * P
    lstm = 2 * c.n_layers * 2 * (P * 4 * H + P * 4 * H + H * P)
    softmax = 2 * 2 * P * (n_negatives + 1)
    return {"char_cnn": cnn, "lstm": lstm, "softmax": softmax}


def matmul_flops_per_second(n: int = 1024, repeats: int = 10) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
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
        path.write_text("\n".join(" ".join(words[(i * 7 + j) % len(words)] for j in range(25)) + " ." for i in range(n_lines)))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["tiny", "small"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per preset (after 2 warm-up steps)")
    parser.add_argument("--batch-size", type=int, default=32, help="rows per step (data.batch_size)")
    parser.add_argument("--lines", type=int, default=8000, help="lines of training text (the vocabulary comes from them)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    matmul = matmul_flops_per_second()
    print(f"threads: {args.threads}  measured fp32 matmul (1024^3): {matmul / 1e9:.1f} GFLOP/s  text: {'news.train' if NEWS.exists() else 'generated'}")
    print(f"{'preset':>8} {'rows x unroll':>13} {'negatives':>9} {'tokens/s':>9} {'train GFLOP/token':>17} {'GFLOP/s':>8} {'of matmul':>9}  forward MFLOP/token by part")
    with tempfile.TemporaryDirectory() as tmp:
        text = training_text(Path(tmp), args.lines)
        for name in args.presets:
            overrides = {
                "paths.train": str(text), "system.threads": args.threads, "training.progress_bar": False,
                "data.batch_size": args.batch_size, "training.resume": False,
            }
            settings = load_settings(REPO / "project" / "configs" / f"pretrain_{name}.cfg", overrides)
            trainer = Trainer(settings, Path(tmp) / name, Processes(0, 1, torch.device("cpu")))
            n_negatives = settings.objective.n_negatives if 0 < settings.objective.n_negatives < len(trainer.vocab) else len(trainer.vocab)
            for _ in range(2):
                trainer.train_step()
            start, tokens = time.perf_counter(), 0
            for _ in range(args.steps):
                tokens += trainer.train_step()[1]
            seconds = time.perf_counter() - start
            parts = forward_flops_per_token(settings.model, n_negatives)
            train_flops = 3 * sum(parts.values())  # forward + backward (about twice the forward)
            rate = tokens / seconds
            shown = ", ".join(f"{k} {v / 1e6:.1f}" for k, v in parts.items())
            print(
                f"{name:>8} {f'{args.batch_size} x {settings.data.unroll_steps}':>13} {n_negatives:>9} {rate:>9.0f} "
                f"{train_flops / 1e9:>17.4f} {rate * train_flops / 1e9:>8.2f} {rate * train_flops / matmul:>9.1%}  {shown}"
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
