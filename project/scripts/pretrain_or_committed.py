"""The study's biLM and its perplexities: the committed ones when present, else the project's own runs.

    python project/scripts/pretrain_or_committed.py pretrain COMMITTED OUT_DIR -- CONFIG [pretrain options]
    python project/scripts/pretrain_or_committed.py perplexity COMMITTED MODEL_DIR TEXT NAME OUTPUT.json [--max-sentences N]

pretrain: with COMMITTED/options.json and its weights (project/report/bilm), they are copied to
OUT_DIR/model-best (with the softmax and vocab.txt where committed, for fine-tuning) and nothing
is pretrained, so the task runs use the biLM the report was made with; otherwise
`python -m spacy_elmo pretrain CONFIG OUT_DIR [options]` runs (resuming from
OUT_DIR/checkpoint.pt). An empty COMMITTED ("") always pretrains.

perplexity: for the committed biLM, the figures for NAME recorded in COMMITTED/perplexity.json
(every sentence; how they were measured: COMMITTED/README.md); otherwise `python -m spacy_elmo
perplexity MODEL_DIR TEXT` (a biLM pretrained here).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from spacy_elmo.formats import OPTIONS, find_weights
from spacy_elmo.pretrain.export import SOFTMAX, VOCAB

COMMITTED_PERPLEXITY = "perplexity.json"


def committed_weights(folder: str) -> Optional[Path]:
    """The committed biLM's weight file, or None where there is none."""
    if not folder:
        return None
    try:
        return find_weights(folder)
    except FileNotFoundError:
        return None


def use_or_pretrain(committed: str, out_dir: Path, pretrain_args: List[str]) -> int:
    weights = committed_weights(committed)
    if weights is not None:
        model_dir = out_dir / "model-best"
        model_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(committed) / OPTIONS, model_dir / OPTIONS)
        shutil.copyfile(weights, model_dir / "weights.hdf5")
        for name in (SOFTMAX, VOCAB):
            if (Path(committed) / name).is_file():
                shutil.copyfile(Path(committed) / name, model_dir / name)
        print(
            f"Using the committed biLM {committed} (copied to {model_dir}); pass an empty COMMITTED to pretrain instead."
        )
        return 0
    if not pretrain_args:
        print("No committed biLM and no pretraining config: pass -- CONFIG [options].", file=sys.stderr)
        return 2
    return subprocess.call(
        [sys.executable, "-m", "spacy_elmo", "pretrain", pretrain_args[0], str(out_dir), *pretrain_args[1:]]
    )


def perplexity(committed: str, model_dir: Path, text: str, name: str, output: Path, options: List[str]) -> int:
    measured = Path(committed) / COMMITTED_PERPLEXITY
    if committed_weights(committed) is None or not measured.is_file():
        command = [
            sys.executable,
            "-m",
            "spacy_elmo",
            "perplexity",
            str(model_dir),
            text,
            "--output",
            str(output),
            *options,
        ]
        return subprocess.call(command)
    figures = json.loads(measured.read_text(encoding="utf-8")).get(name)
    if figures is None:
        print(f"{measured} has no figures for {name!r}: no perplexity to report.", file=sys.stderr)
        return 1
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(
        json.dumps({**figures, "model": committed, "text": text, "source": str(measured)}, indent=2) + "\n",
        encoding="utf-8",
    )
    print(f"{name}: the committed biLM's perplexity from {measured}: {figures}")
    return 0


def main(argv: List[str]) -> int:
    if argv[:1] == ["pretrain"] and len(argv) >= 4 and argv[3] == "--":
        return use_or_pretrain(argv[1], Path(argv[2]), argv[4:])
    if argv[:1] == ["perplexity"] and len(argv) >= 6:
        return perplexity(argv[1], Path(argv[2]), argv[3], argv[4], Path(argv[5]), argv[6:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
