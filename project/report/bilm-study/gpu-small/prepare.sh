#!/usr/bin/env bash
# Builds .device/ (git-ignored) for run.sh: the shared corpus pre-tokenised by the pretraining
# tokenizer (spaCy is not installed on the GPU machine), the vocabulary, xz-compressed to fit the
# machine's 64 MiB transfer, and the wheels of confection's dependencies for its Python 3.12.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
DATA=${DATA:-../shared/data/lm}
mkdir -p .device/data .device/whl
for name in news.train books.train reviews.train news.valid; do
  .venv/bin/python project/scripts/pretokenize.py "$DATA/$name.txt.gz" ".device/data/$name.txt"
done
.venv/bin/python project/scripts/pretokenize.py "$DATA/wikitext2.valid.tokens" .device/data/wikitext2.valid.txt
.venv/bin/python project/scripts/pretokenize.py "$DATA/ptb.valid.txt" .device/data/ptb.valid.txt
.venv/bin/python - <<'PY'
from collections import Counter
from spacy_elmo.pretrain.vocab import Vocabulary
counts = Counter()
for name in ("news.train", "books.train", "reviews.train"):
    with open(f".device/data/{name}.txt", encoding="utf-8") as f:
        for line in f:
            counts.update(line.split())
Vocabulary.from_counts(counts, max_size=100_000).to_disk(".device/data/vocab.txt")
PY
xz -9 -T2 -f .device/data/*.txt
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .device/whl \
  confection==1.3.4 srsly==2.5.6 catalogue==2.0.10 wasabi==1.1.3 pydantic==2.14.4 pydantic-core==2.50.5 \
  annotated-types==0.8.0 typing-inspection==0.4.5
