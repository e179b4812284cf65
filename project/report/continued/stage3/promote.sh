#!/bin/bash
# How ../../bilm/ became the third stage's biLM: this folder's bilm/ (options, weights, its own
# softmax stored as float16 with gzip, the same vocab; then removed: the same files), and its
# perplexities on every sentence of the three held-out texts (perplexity-*.json here, measured
# with `python -m spacy_elmo perplexity`) as ../../bilm/perplexity.json and, as `spacy project
# run perplexity` writes them, ../../perplexity-*.json.
set -e
cd /work/main
R=project/report
S=$R/continued/stage3
cp $S/bilm/options.json $S/bilm/weights.hdf5 $S/bilm/softmax_weights.hdf5 $S/bilm/vocab.txt $R/bilm/
.venv/bin/python - $S $R/bilm/perplexity.json <<'PY'
import json
import sys
from pathlib import Path

stage, output = Path(sys.argv[1]), Path(sys.argv[2])
figures = {}
for name, short in (("news.valid", "news"), ("wikitext2.valid", "wikitext2"), ("ptb.valid", "ptb")):
    result = json.loads((stage / f"perplexity-{short}.json").read_text())
    figures[name] = {k: result[k] for k in ("forward", "backward", "mean", "n_tokens", "sentences")}
output.write_text(json.dumps(figures, indent=2) + "\n")
PY
D=../shared/data/lm
for text in news.valid:news.valid.txt.gz:news wikitext2.valid:wikitext2.valid.tokens:wikitext2 ptb.valid:ptb.valid.txt:ptb; do
  IFS=: read -r name file short <<< "$text"
  .venv/bin/python project/scripts/pretrain_or_committed.py perplexity $R/bilm $R/bilm $D/$file $name $R/perplexity-$short.json
done
