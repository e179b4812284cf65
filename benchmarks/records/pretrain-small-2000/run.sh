#!/bin/bash
# small preset, 32 rows x 20, 2,000 steps, fp32 and bf16 side by side (one thread each): RSS over a long run
# and bf16's dev perplexity against fp32's. Same seed, data, vocabulary and config apart from mixed_precision.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
G=/root/elmo-runs/gpu
for mp in false true; do
  .venv/bin/python -m spacy_elmo pretrain /root/elmo-runs/rss/config.cfg /root/elmo-runs/rss/mp-$mp \
    --paths.train $G/news.train.tok,$G/books.train.tok,$G/reviews.train.tok --paths.dev $G/news.valid.tok \
    --paths.vocab $G/vocab.txt --system.threads 1 --system.mixed_precision $mp > /root/elmo-runs/rss/mp-$mp.log 2>&1 &
done
wait
