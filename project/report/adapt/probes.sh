#!/bin/bash
# Linear probes per layer of the committed biLM and of its CoNLL-adapted copy; learned mixes of the adapted NER pipelines.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
D=../shared/data/ner/conll2003
E=/root/elmo-runs/study2/experiments
.venv/bin/python project/scripts/probe_layers.py project/report/bilm $D/eng.train $D/eng.testa /root/elmo-runs/probes/layers.json --plot /root/elmo-runs/probes/layers.png \
  --pipeline ner-adapted-100pct=$E/ner-elmo-adapted-100pct/seed-0/model-best --pipeline ner-adapted-10pct=$E/ner-elmo-adapted-10pct/seed-0/model-best --pipeline ner-adapted-1pct=$E/ner-elmo-adapted-1pct/seed-0/model-best
.venv/bin/python project/scripts/probe_layers.py /root/elmo-runs/adapt/conll/model-best $D/eng.train $D/eng.testa /root/elmo-runs/probes/layers-adapted.json
