#!/bin/bash
# SST-5 textcat variants for both pipelines, 3 seeds each, compared on dev accuracy: model-best
# chosen by accuracy (mean pooling as before), and that plus mean+max pooling. OUT: where the runs go.
T=$(dirname "$0")/tasks.sh
OUT=${OUT:-/root/elmo-runs/continued/sst5-variants}
ACC="--training.score_weights.cats_score 0.0 --training.score_weights.cats_micro_f 1.0"
TEXTCAT="$ACC" EXPERIMENTS="$OUT/sst5-acc" bash "$T" baseline-sst5 sst5
TEXTCAT="$ACC --components.textcat.model.use_reduce_max true" EXPERIMENTS="$OUT/sst5-meanmax-acc" bash "$T" baseline-sst5 sst5
