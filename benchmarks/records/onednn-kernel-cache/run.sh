#!/bin/bash
# The two pretraining runs of this folder: `small` continued from project/report/bilm with its
# softmax, bf16 matmuls (a 2-core Xeon with AMX), one thread, 500 steps of 128 rows x 20, the
# oneDNN kernels it builds logged with the seconds since start. Run once with the code before
# the shape padding (NAME=pretrain-before) and once after (NAME=pretrain-after), from this folder.
set -e
NAME=${NAME:-pretrain-after}
P=$(cd ../../.. && pwd)
B=$P/project/report/bilm
D=$P/../shared/data/lm
mkdir -p "$NAME"
ONEDNN_VERBOSE=profile_create OMP_NUM_THREADS=1 stdbuf -oL "$P/.venv/bin/python" -u -m spacy_elmo pretrain \
  "$P/project/configs/pretrain_small.cfg" "$NAME/bilm" \
  --paths.train $D/news.train.txt.gz,$D/books.train.txt.gz,$D/reviews.train.txt.gz \
  --paths.dev $D/news.valid.txt.gz --paths.vocab $B/vocab.txt --paths.init_bilm $B --paths.init_softmax $B/softmax_weights.hdf5 \
  --system.threads 1 --training.eval_every 100000 --training.max_dev_sentences 20 --training.max_steps 500 \
  --training.log_every 10 --training.progress_bar false 2>&1 |
  python3 -c '
import sys, time
start = time.time()
for line in sys.stdin:
    if "cache_miss" in line or "onednn" not in line:
        print(f"{time.time() - start:.2f},{line}", end="", flush=True)
' | gzip > "$NAME/onednn-create.txt.gz"
mv "$NAME/bilm/metrics.jsonl" "$NAME/" && rm -rf "$NAME/bilm"
