#!/bin/bash
# Linear probes per layer of a continued biLM; learned mixes of those of its NER 100 %, NER 10 % and
# SST-5 pipelines (seed 0) that EXPERIMENTS holds; its news.valid perplexity where OUT has none yet.
# BILM: the biLM folder; EXPERIMENTS: its task runs (tasks.sh's); OUT: where layers.json and
# perplexity-news.json go.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
D=../shared/data/ner/conll2003
E=${EXPERIMENTS:-/root/elmo-runs/continued/experiments}
B=${BILM:-/root/elmo-runs/continued/bilm}
O=${OUT:-/root/elmo-runs/continued}
pipelines=()
for run in ner-100pct:ner-elmo-100pct ner-10pct:ner-elmo-10pct sst5:sst5-elmo; do
  model=$E/${run#*:}/seed-0/model-best
  [ -d "$model" ] && pipelines+=(--pipeline "${run%%:*}=$model")
done
.venv/bin/python project/scripts/probe_layers.py $B $D/eng.train $D/eng.testa $O/layers.json "${pipelines[@]}"
[ -e $O/perplexity-news.json ] || .venv/bin/python -m spacy_elmo perplexity $B ../shared/data/lm/news.valid.txt.gz --output $O/perplexity-news.json
