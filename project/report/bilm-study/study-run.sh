#!/usr/bin/env bash
# The study's biLM: project.yml's pretrain command with the study's vars; resumable (rerun this script).
cd /work/main
exec env OMP_NUM_THREADS=1 .venv/bin/python -m spacy_elmo pretrain project/configs/pretrain_mid.cfg /root/elmo-runs/study-mid \
  --paths.train /work/shared/data/lm/news.train.txt.gz,/work/shared/data/lm/books.train.txt.gz,/work/shared/data/lm/reviews.train.txt.gz \
  --paths.dev /work/shared/data/lm/news.valid.txt.gz \
  --paths.vocab /root/elmo-runs/small/vocab.txt \
  --data.batch_size 32 --training.max_steps 40000 --training.eval_every 2000 --training.max_dev_sentences 1000 \
  --system.threads 1 --training.progress_bar false "$@"
