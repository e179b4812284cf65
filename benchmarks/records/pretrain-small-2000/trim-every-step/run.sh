#!/bin/bash
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
G=/root/elmo-runs/gpu
.venv/bin/python /root/elmo-runs/trim/exp.py pretrain /root/elmo-runs/rss/config.cfg /root/elmo-runs/trim/every-step \
  --paths.train $G/news.train.tok,$G/books.train.tok,$G/reviews.train.tok --paths.dev $G/news.valid.tok \
  --paths.vocab $G/vocab.txt --system.threads 1 --system.mixed_precision true --training.max_steps 1000 > /root/elmo-runs/trim/run.log 2>&1 &
pid=$!
while kill -0 $pid 2>/dev/null; do
  echo "$(date +%s) $(awk '/VmRSS/ {print int($2/1024)}' /proc/$pid/status 2>/dev/null) $(tail -n 1 /root/elmo-runs/trim/every-step/metrics.jsonl 2>/dev/null | cut -c1-20)" >> /root/elmo-runs/trim/rss-samples.txt
  sleep 10
done
