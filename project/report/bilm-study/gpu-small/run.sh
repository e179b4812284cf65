#!/usr/bin/env bash
# The study's biLM on a GPU machine lent for minutes (one H200, 16 cores, no network, no spaCy):
# the project's own pretraining (project/configs/pretrain_small.cfg, 512 rows per update, a
# wall-clock budget) on the shared corpus that prepare.sh pre-tokenised into .device/, then
# full-softmax perplexities, benchmarks/gpu_check.py, and the files to bring back under $OUT
# (at most 8 files of 16 MiB: the weights in parts, the softmax's first rows in fp16, a tarball).
# Run from the repository root: bash project/report/bilm-study/gpu-small/run.sh TRAIN_SECONDS CHECK_SECONDS
# (a CPU dry run: DEVICE=cpu ROWS=8 EVAL_SENTENCES=50 WHEELS=DIR_OF_CP311_WHEELS, python3 = a venv with torch).
set -uo pipefail
TRAIN_SECONDS=${1:-360}
CHECK_SECONDS=${2:-60}
HERE=project/report/bilm-study/gpu-small
RUN=/tmp/run
DATA=/tmp/data
OUT=${OUT:-/tmp/out}
export DEVICE=${DEVICE:-cuda} ROWS=${ROWS:-512} EVAL_SENTENCES=${EVAL_SENTENCES:-0}
WHEELS=${WHEELS:-.device/whl}
mkdir -p "$RUN" "$DATA" "$OUT" /tmp/ret2
exec > >(tee "$RUN/log.txt") 2>&1
export PYTHONUNBUFFERED=1
date -u
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
nproc
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$WHEELS"/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
if ! python3 -c "import spacy" 2>/dev/null; then
  # spaCy's wheels (~50 MB) do not fit the transfer; pretraining on pre-tokenised text uses only
  # spaCy's registry (a confection registry with a `misc` table) and its config loader.
  mkdir -p /tmp/stub/spacy
  cat > /tmp/stub/spacy/__init__.py <<'PY'
"""Stand-in for spaCy on a machine without it: the registry and config loader of pretraining."""
import catalogue
import confection

from . import language, util  # noqa: F401


class registry(confection.registry):
    misc = catalogue.create("spacy", "misc", entry_points=False)
PY
  cat > /tmp/stub/spacy/util.py <<'PY'
import confection


def load_config(path, overrides={}, interpolate=False):
    return confection.Config().from_disk(path, overrides=overrides, interpolate=interpolate)
PY
  echo "class Language: ..." > /tmp/stub/spacy/language.py
  export PYTHONPATH=/tmp/stub:$PYTHONPATH
fi
python3 - "$DATA" <<'PY'
"""Decompress .device/data/*.xz into DATA (Python's lzma: the image may lack xz)."""
import glob
import lzma
import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor


def unpack(path: str) -> None:
    with lzma.open(path) as source, open(os.path.join(sys.argv[1], os.path.basename(path)[:-3]), "wb") as target:
        shutil.copyfileobj(source, target, 1 << 20)


with ThreadPoolExecutor(8) as pool:
    list(pool.map(unpack, glob.glob(".device/data/*.xz")))
PY
wc -l "$DATA"/*.txt

python3 - "$TRAIN_SECONDS" <<'PY'
"""Pretrain with the time budget; if the fast path fails at once on this GPU, the exact path."""
import os
import sys
import time
import traceback
from pathlib import Path

from confection import Config

from spacy_elmo.pretrain import pretrain
from spacy_elmo.pretrain.config import resolve_settings

started = time.monotonic()
budget = float(sys.argv[1])
data = "/tmp/data"
overrides = {
    "paths.train": f"{data}/news.train.txt,{data}/books.train.txt,{data}/reviews.train.txt",
    "paths.dev": f"{data}/news.valid.txt",
    "paths.vocab": f"{data}/vocab.txt",
    "data.batch_size": int(os.environ["ROWS"]),
    "training.max_steps": 1_000_000,
    "training.eval_every": 2000,
    "training.log_every": 50,
    "training.checkpoint_minutes": 0,
    "training.max_dev_sentences": 1000,
    "training.progress_bar": False,
    "system.device": os.environ["DEVICE"],
}
for fast in (True, False):
    config = Config().from_disk("project/configs/pretrain_small.cfg", overrides={**overrides, "system.fast_path": fast})
    config["tokenizer"] = {"@misc": "spacy_elmo.WhitespaceSentences.v1"}  # pre-tokenised by prepare.sh
    config["training"]["max_minutes"] = max(0.5, (budget - (time.monotonic() - started)) / 60)
    out = Path("/tmp/run/out" if fast else "/tmp/run/out-exact")
    try:
        print(pretrain(resolve_settings(config), out), flush=True)
        Path("/tmp/run/model").symlink_to(out)
        break
    except Exception:
        traceback.print_exc()
        print(f"pretraining with fast_path={fast} failed after {time.monotonic() - started:.0f} s", flush=True)
PY

M=/tmp/run/model
if [ -d $M/model-last ]; then
  cp $M/model-last/weights.hdf5 $RUN/weights.hdf5
  (cd $RUN && split -b 13M -d weights.hdf5 weights.hdf5.part-)
  mv $RUN/weights.hdf5.part-* "$OUT/"
  python3 - <<'PY'
"""The softmax's first 40,003 rows (the specials and the 40,000 most frequent words) in fp16, for
fine-tuning on CPU; the whole softmax in fp32 waits in /tmp/ret2 for a second call."""
import h5py
import numpy

with h5py.File("/tmp/run/model/model-last/softmax_weights.hdf5", "r") as f:
    weight, bias = numpy.asarray(f["softmax/W"]), numpy.asarray(f["softmax/b"])
numpy.savez("/tmp/run/softmax_top40k_fp16.npz", W=weight[:40003].astype(numpy.float16), b=bias[:40003].astype(numpy.float16))
PY
  mv $RUN/softmax_top40k_fp16.npz "$OUT/"
  cp $M/model-last/softmax_weights.hdf5 /tmp/ret2/ && (cd /tmp/ret2 && split -b 13M -d softmax_weights.hdf5 softmax_weights.hdf5.part- && rm softmax_weights.hdf5)
fi

pack() {
  tar -czf "$OUT/records.tar.gz" -C $RUN log.txt $(cd $RUN && ls *.json 2>/dev/null) \
    -C $M metrics.jsonl segments.jsonl -C $M/model-last options.json vocab.txt config.cfg 2>/dev/null || true
}
pack

if [ -d $M/model-last ]; then
  python3 - <<'PY'
"""Full-softmax perplexity of model-last on each held-out text (all sentences)."""
import json
import os

from spacy_elmo.pretrain import TextLines, load_model_dir, perplexity
from spacy_elmo.pretrain.evaluate import text_sentences
from spacy_elmo.pretrain.sentences import whitespace_sentences

lm, vocab = load_model_dir("/tmp/run/model/model-last")
lm.to(os.environ["DEVICE"])
results = {}
for name in ("news.valid", "wikitext2.valid", "ptb.valid"):
    sentences = text_sentences(TextLines(f"/tmp/data/{name}.txt"), whitespace_sentences())
    results[name] = perplexity(lm, sentences, vocab, batch_size=256, max_sentences=int(os.environ["EVAL_SENTENCES"])).to_dict()
    print(name, results[name], flush=True)
with open("/tmp/run/perplexity.json", "w") as f:
    json.dump(results, f, indent=2)
PY
  pack
fi

timeout "$CHECK_SECONDS" python3 benchmarks/gpu_check.py --device "$DEVICE" --out $RUN/gpu_check.json --train-presets small \
  --steps 3 --repeats 2 --lines 2000 || echo "gpu_check stopped (exit $?)"
pack
ls -la "$OUT" /tmp/ret2
date -u
