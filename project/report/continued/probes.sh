#!/bin/bash
# Linear probes per layer of the continued biLM; learned mixes of its NER and SST-5 pipelines (seed 0); its news.valid perplexity.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
D=../shared/data/ner/conll2003
E=/root/elmo-runs/continued/experiments
B=/root/elmo-runs/continued/bilm
.venv/bin/python project/scripts/probe_layers.py $B $D/eng.train $D/eng.testa /root/elmo-runs/continued/layers.json \
  --pipeline ner-100pct=$E/ner-elmo-100pct/seed-0/model-best --pipeline ner-10pct=$E/ner-elmo-10pct/seed-0/model-best --pipeline sst5=$E/sst5-elmo/seed-0/model-best
.venv/bin/python -m spacy_elmo perplexity $B ../shared/data/lm/news.valid.txt.gz --output /root/elmo-runs/continued/perplexity-news.json
