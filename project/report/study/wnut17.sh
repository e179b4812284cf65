#!/bin/bash
# WNUT-17 NER, baseline and + ELMo (the committed biLM), 3 seeds, as project.yml's ner command runs them.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
X=/root/elmo-runs/wnut/experiments
B=project/report/bilm
.venv/bin/python project/scripts/run_experiment.py wnut17-baseline project/configs/ner.cfg project/corpus/wnut17/test.spacy $X --seeds 0,1,2 --gpu-id -1 --paths.train project/corpus/wnut17/train.spacy --paths.dev project/corpus/wnut17/dev.spacy --training.max_steps 20000 --system.threads 1 > /root/elmo-runs/wnut/baseline.log 2>&1 &
.venv/bin/python project/scripts/run_experiment.py wnut17-elmo project/configs/ner_elmo.cfg project/corpus/wnut17/test.spacy $X --seeds 0,1,2 --gpu-id -1 --paths.train project/corpus/wnut17/train.spacy --paths.dev project/corpus/wnut17/dev.spacy --paths.elmo_options $B/options.json --paths.elmo_weights $B/weights.hdf5 --training.max_steps 20000 --system.threads 1 > /root/elmo-runs/wnut/elmo.log 2>&1 &
wait
