#!/bin/bash
# A softmax for the continued biLM, whose own softmax was not kept: the biLM frozen
# (training.train_bilm = false), the softmax fitted from ../bilm/'s on the same news, books and
# reviews text, dev perplexity on the first 2,000 sentences of news.valid (the continued run
# reached 110.6 there with its own softmax). OUT: the output folder; MINUTES: the time budget.
# Rerun the same command to resume. As run before promote.sh, when this folder's bilm/ held the
# continued weights (now ../bilm/'s) and ../bilm/ the first stage's weights and softmax.
set -e
P=/work/main
B=$P/project/report/bilm
D=/work/shared/data/lm
OUT=${OUT:-/root/elmo-runs/softmax-fit}
mkdir -p "$OUT"
OMP_NUM_THREADS=1 $P/.venv/bin/python -m spacy_elmo pretrain $P/project/configs/pretrain_small.cfg "$OUT/bilm" \
  --paths.train $D/news.train.txt.gz,$D/books.train.txt.gz,$D/reviews.train.txt.gz \
  --paths.dev $D/news.valid.txt.gz --paths.vocab $B/vocab.txt \
  --paths.init_bilm $P/project/report/continued/bilm --paths.init_softmax $B/softmax_weights.hdf5 \
  --training.train_bilm false --system.threads 1 --training.eval_every 250 --training.log_every 50 \
  --training.max_dev_sentences 2000 --training.max_minutes "${MINUTES:-35}" --training.progress_bar false \
  >> "$OUT/log.txt" 2>&1
