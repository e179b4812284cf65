"""One command for a machine with a CUDA GPU: pretraining and inference throughput, and GPU
outputs checked against the CPU's, written to one JSON file (a few minutes on a GPU).

    python benchmarks/gpu_check.py --out gpu_check.json
    python benchmarks/gpu_check.py --device cpu --train-presets tiny --infer-preset tiny --parity-preset tiny \
        --batch-sizes 4 --steps 1 --lines 200  # dry run

- parity: a random biLM of --infer-preset on the device against the same weights on the CPU
  (exact path and fast path, fp32), and the training fast path's loss and gradient norm on
  one batch of --parity-preset; the contract is 1e-4 (fp32).
- pretraining: training tokens/s of each --train-presets preset (its project config, 128
  rows x 20 steps), fast path, fp32 and bf16 matmuls.
- inference: tokens/s of --infer-preset through FastBiLM at each --batch-sizes, fp32 and bf16,
  and through the exact path.
Prints figures only; nothing is asserted.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List

import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_pretrain import REPO, training_text  # noqa: E402
from confection import Config  # noqa: E402

from spacy_elmo.chars import CharacterIds  # noqa: E402
from spacy_elmo.model import BiLM, FastBiLM, preset  # noqa: E402
from spacy_elmo.pretrain.config import resolve_settings  # noqa: E402
from spacy_elmo.pretrain.distributed import Processes  # noqa: E402
from spacy_elmo.pretrain.train import Trainer  # noqa: E402

WORDS = "the of and to in a is that for it as was with be by on not he this are market said year".split()


def sentences(n: int, seed: int = 0) -> List[List[str]]:
    """n sentences of 15-30 words (CoNLL-2003 training sentences where the data is present)."""
    conll = REPO / "../shared/data/ner/conll2003/eng.train"
    if conll.exists():
        found, words = [], []
        for line in conll.read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if fields and fields[0] != "-DOCSTART-":
                words.append(fields[0])
            elif words:
                if 15 <= len(words) <= 30:
                    found.append(words)
                words = []
            if len(found) == n:
                return found
    generator = torch.Generator().manual_seed(seed)
    return [
        [
            WORDS[int(i)]
            for i in torch.randint(
                len(WORDS), (int(torch.randint(15, 31, (1,), generator=generator)),), generator=generator
            )
        ]
        for _ in range(n)
    ]


def settings_for(preset_name: str, overrides: Dict[str, object]):
    """The preset's project config with ``overrides``, reading the text as one sentence per line
    split on whitespace: spaCy's tokenizer is not needed on the GPU machine."""
    config = Config().from_disk(REPO / "project" / "configs" / f"pretrain_{preset_name}.cfg", overrides=overrides)
    config["tokenizer"] = {"@misc": "spacy-elmo.WhitespaceSentences.v1"}
    return resolve_settings(config)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def rate(run: Callable[[], int], device: torch.device, repeats: int) -> float:
    """Items per second of run() (which returns its item count), best of ``repeats`` after one warm-up."""
    run()
    synchronize(device)
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        n = run()
        synchronize(device)
        best = max(best, n / (time.perf_counter() - start))
    return best


def parity(infer_preset: str, parity_preset: str, device: torch.device, lines: int) -> Dict[str, float]:
    torch.manual_seed(0)
    cpu_model = BiLM(preset(infer_preset)).eval()
    device_model = BiLM(preset(infer_preset)).eval()
    device_model.load_state_dict(cpu_model.state_dict())
    device_model.to(device)
    ids = torch.from_numpy(CharacterIds().batch(sentences(16)))
    with torch.no_grad():
        reference = cpu_model(ids).layers
        exact = device_model(ids.to(device)).layers.cpu()
        fast = FastBiLM(device_model)(ids.to(device)).layers.cpu()
    figures = {
        "exact_max_abs_diff": float((exact - reference).abs().max()),
        "fast_max_abs_diff": float((fast - reference).abs().max()),
    }
    with tempfile.TemporaryDirectory() as tmp:
        text = training_text(Path(tmp), lines)
        losses = {}
        for name, dev in (("cpu", torch.device("cpu")), ("device", device)):
            settings = settings_for(
                parity_preset,
                {"paths.train": str(text), "training.progress_bar": False, "data.batch_size": 16, "training.resume": False,
                 "system.mixed_precision": False, "objective.dropout": 0.0, "system.device": dev.type},
            )  # fmt: skip
            trainer = Trainer(settings, Path(tmp) / name, Processes(0, 1, dev))
            loss, _ = trainer.train_step()
            norm = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in trainer.lm.parameters() if p.grad is not None))
            losses[name] = (loss, float(norm))
    figures["train_loss_rel_diff"] = abs(losses["device"][0] - losses["cpu"][0]) / abs(losses["cpu"][0])
    figures["train_grad_norm_rel_diff"] = abs(losses["device"][1] - losses["cpu"][1]) / abs(losses["cpu"][1])
    figures["within_1e-4"] = all(v <= 1e-4 for k, v in figures.items() if k != "within_1e-4")
    return figures


def pretraining(
    presets: List[str], device: torch.device, steps: int, batch_size: int, lines: int
) -> Dict[str, Dict[str, float]]:
    out: Dict[str, Dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        text = training_text(Path(tmp), lines)
        for name in presets:
            out[name] = {}
            for label, mixed in (("fp32", False), ("bf16", True)):
                settings = settings_for(
                    name,
                    {"paths.train": str(text), "training.progress_bar": False, "data.batch_size": batch_size, "training.resume": False,
                     "system.mixed_precision": mixed, "system.device": device.type},
                )  # fmt: skip
                try:
                    trainer = Trainer(settings, Path(tmp) / f"{name}-{label}", Processes(0, 1, device))
                except ValueError as err:  # bf16 not supported here
                    out[name][label] = str(err)
                    continue
                out[name][label] = rate(lambda: sum(trainer.train_step()[1] for _ in range(steps)), device, 1)
                print(f"pretraining {name:>8} {label}: {out[name][label]:,.0f} tokens/s", flush=True)
    return out


def inference(name: str, device: torch.device, batch_sizes: List[int], repeats: int) -> Dict[str, Dict[str, float]]:
    torch.manual_seed(0)
    model = BiLM(preset(name)).eval().to(device)
    runners = {"exact": model, "fast fp32": FastBiLM(model), "fast bf16": FastBiLM(model, matmul_dtype=torch.bfloat16)}
    out: Dict[str, Dict[str, float]] = {}
    for batch_size in batch_sizes:
        batch = sentences(batch_size)
        ids = torch.from_numpy(CharacterIds().batch(batch)).to(device)
        n_tokens = sum(len(s) for s in batch)
        out[str(batch_size)] = {}
        for label, runner in runners.items():

            def run() -> int:
                with torch.no_grad():
                    runner(ids)
                return n_tokens

            out[str(batch_size)][label] = rate(run, device, repeats)
            print(
                f"inference {name} batch {batch_size:>4} {label:>9}: {out[str(batch_size)][label]:,.0f} tokens/s",
                flush=True,
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu for a dry run")
    parser.add_argument("--out", type=Path, default=Path("gpu_check.json"))
    parser.add_argument("--train-presets", nargs="+", default=["small", "original"])
    parser.add_argument("--infer-preset", default="original")
    parser.add_argument("--parity-preset", default="small")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[32, 256])
    parser.add_argument("--batch-size", type=int, default=128, help="pretraining rows per step")
    parser.add_argument("--steps", type=int, default=5, help="timed pretraining steps per preset and precision")
    parser.add_argument("--repeats", type=int, default=3, help="timed inference calls per setting")
    parser.add_argument(
        "--lines", type=int, default=8000, help="lines of training text (the vocabulary comes from them)"
    )
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("No CUDA GPU visible to torch; run with --device cpu for a dry run.")
    started = time.perf_counter()
    report = {
        "device": torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "parity": parity(args.infer_preset, args.parity_preset, device, args.lines),
    }
    print(f"parity: {json.dumps(report['parity'])}", flush=True)
    report["pretraining_tokens_per_second"] = pretraining(
        args.train_presets, device, args.steps, args.batch_size, args.lines
    )
    report["inference_tokens_per_second"] = {
        args.infer_preset: inference(args.infer_preset, device, args.batch_sizes, args.repeats)
    }
    report["seconds"] = round(time.perf_counter() - started, 1)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({report['seconds']} s)")


if __name__ == "__main__":
    main()
