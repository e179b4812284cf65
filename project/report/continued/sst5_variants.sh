#!/bin/bash
# SST-5 textcat variants, both pipelines, chosen on dev accuracy: model-best by accuracy
# (mean pooling as before), and mean+max pooling with model-best by accuracy.
T=$(dirname "$0")/tasks.sh
ACC="--training.score_weights.cats_score 0.0 --training.score_weights.cats_micro_f 1.0"
for seed in 0 1 2; do
  for v in acc meanmax-acc; do
    case $v in
      acc) X="$ACC" ;;
      meanmax-acc) X="$ACC --components.textcat.model.use_reduce_max true" ;;
    esac
    SEEDS=$seed TEXTCAT="$X" EXPERIMENTS=${OUT:-/root/elmo-runs/s26}/sst5-$v bash $T baseline-sst5 sst5
  done
done
