#!/bin/bash
# CoNLL-2003 NER at 10 % with the continued biLM (one thread; SEEDS=0,1,2 by default).
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
B=/root/elmo-runs/continued/bilm
.venv/bin/python project/scripts/run_experiment.py ner-elmo-10pct project/configs/ner_elmo.cfg project/corpus/ner/test.spacy /root/elmo-runs/continued/experiments --seeds ${SEEDS:-0,1,2} --gpu-id -1 --paths.train project/corpus/ner/train-10pct.spacy --paths.dev project/corpus/ner/dev.spacy --paths.elmo_options $B/options.json --paths.elmo_weights $B/weights.hdf5 --training.max_steps 20000
