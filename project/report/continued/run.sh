#!/bin/bash
# Continued pretraining of the committed biLM (project/report/bilm, with its softmax and vocabulary) on
# news+books+reviews; FROM=<biLM folder> continues another biLM of the same size and vocabulary instead,
# with SOFTMAX=<its softmax_weights.hdf5> (the committed biLM's by default).
# As run for the second stage, project/report/bilm held the first stage's biLM.
# OUT: the run's folder, outside the checkout (bilm/ with checkpoints, log.txt). Start or resume (from
# OUT/bilm/checkpoint.pt): MINUTES=80 THREADS=2 nohup bash run.sh >/dev/null 2>&1 &
# Arguments: further config overrides (e.g. --data.segments_per_file 7: other parts of the text first).
set -e
OUT=${OUT:-$HOME/elmo-runs/continue-small}
mkdir -p "$OUT"
cd "$OUT"
P=/work/main
B=$P/project/report/bilm
D=/work/shared/data/lm
T=${THREADS:-2}
exec env OMP_NUM_THREADS=$T $P/.venv/bin/python -m spacy_elmo pretrain $P/project/configs/pretrain_small.cfg bilm \
  --paths.train $D/news.train.txt.gz,$D/books.train.txt.gz,$D/reviews.train.txt.gz \
  --paths.dev $D/news.valid.txt.gz --paths.vocab $B/vocab.txt \
  --paths.init_bilm ${FROM:-$B} --paths.init_softmax ${SOFTMAX:-$B/softmax_weights.hdf5} \
  --system.threads $T --training.eval_every 500 --training.max_dev_sentences 2000 \
  --training.max_minutes ${MINUTES:-0} --training.progress_bar false "$@" >> log.txt 2>&1
