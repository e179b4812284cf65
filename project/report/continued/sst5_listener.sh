#!/bin/bash
# SST-5 with ELMo: the listener's own settings, 3 seeds each, one thread, compared on dev accuracy
# (the baseline pipeline has no listener, so its runs stand). OUT: where the runs go.
T=$(dirname "$0")/tasks.sh
OUT=${OUT:-$HOME/elmo-runs/sst5-listener}
E="--components.textcat.model.tok2vec.elmo"
EXPERIMENTS="$OUT/default" bash "$T" sst5
TEXTCAT="$E.layer_norm true" EXPERIMENTS="$OUT/layer-norm" bash "$T" sst5
TEXTCAT="$E.dropout 0.5" EXPERIMENTS="$OUT/dropout-0.5" bash "$T" sst5
