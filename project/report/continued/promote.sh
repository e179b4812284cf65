#!/bin/bash
# How ../bilm/ became the continued biLM: its options and weights (this folder's bilm/, then
# removed: the same files), the softmax fitted to them with the biLM frozen (softmax_fit.sh's
# model-best, FIT), stored as the first stage's was (float16, gzip), and the perplexities with that
# softmax on every sentence of the three held-out texts: ../bilm/perplexity.json, and
# ../perplexity-*.json as `spacy project run perplexity` writes them.
set -e
cd /work/main
R=project/report
D=../shared/data/lm
FIT=${FIT:-/root/elmo-runs/softmax-fit/bilm/model-best}
cp $R/continued/bilm/options.json $R/continued/bilm/weights.hdf5 $R/bilm/
.venv/bin/python - "$FIT/softmax_weights.hdf5" $R/bilm/softmax_weights.hdf5 <<'PY'
import sys

import h5py

with h5py.File(sys.argv[1], "r") as source, h5py.File(sys.argv[2], "w") as target:
    for name in ("softmax/W", "softmax/b"):
        target.create_dataset(name, data=source[name][...].astype("float16"), compression="gzip")
PY
export OMP_NUM_THREADS=1
for text in news.valid:news.valid.txt.gz wikitext2.valid:wikitext2.valid.tokens ptb.valid:ptb.valid.txt; do
  .venv/bin/python -m spacy_elmo perplexity $R/bilm $D/${text#*:} --output /tmp/perplexity-${text%%:*}.json
done
.venv/bin/python - <<'PY'
import json
from pathlib import Path

figures = {}
for name in ("news.valid", "wikitext2.valid", "ptb.valid"):
    result = json.loads(Path(f"/tmp/perplexity-{name}.json").read_text())
    figures[name] = {k: result[k] for k in ("forward", "backward", "mean", "n_tokens")} | {"sentences": "all"}
Path("project/report/bilm/perplexity.json").write_text(json.dumps(figures, indent=2) + "\n")
PY
for text in news.valid:news.valid.txt.gz:news wikitext2.valid:wikitext2.valid.tokens:wikitext2 ptb.valid:ptb.valid.txt:ptb; do
  IFS=: read -r name file short <<< "$text"
  .venv/bin/python project/scripts/pretrain_or_committed.py perplexity $R/bilm $R/bilm $D/$file $name $R/perplexity-$short.json
done
