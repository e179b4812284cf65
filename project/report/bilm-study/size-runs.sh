#!/usr/bin/env bash
# Pretraining runs of the biLM size study; resumable: rerun the same line.
# usage: run.sh NAME THREADS [extra overrides]
set -e
name=$1; threads=$2; shift 2
cd /work/main
exec env OMP_NUM_THREADS=$threads .venv/bin/python -m spacy_elmo pretrain project/configs/pretrain_small.cfg ~/elmo-runs/$name \
  --paths.train /work/shared/data/lm/news.train.txt.gz,/work/shared/data/lm/books.train.txt.gz,/work/shared/data/lm/reviews.train.txt.gz \
  --paths.dev /work/shared/data/lm/news.valid.txt.gz \
  --training.max_steps 10000 --training.eval_every 500 --training.max_dev_sentences 1000 \
  --system.threads $threads --training.progress_bar false "$@"
