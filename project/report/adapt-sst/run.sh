#!/bin/bash
# Domain adaptation of the committed biLM on SST's training sentences (one thread), as `adapt` does for CoNLL.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
A=/root/elmo-runs/adapt-sst
B=project/report/bilm
.venv/bin/python project/scripts/task_text.py project/corpus/sst5/train.spacy $A/sst.train.txt
.venv/bin/python project/scripts/task_text.py project/corpus/sst5/dev.spacy $A/sst.dev.txt
.venv/bin/python -m spacy_elmo pretrain project/configs/pretrain_adapt.cfg $A/sst --paths.train $A/sst.train.txt --paths.dev $A/sst.dev.txt --paths.init_bilm $B --paths.init_softmax $B/softmax_weights.hdf5 --paths.vocab $B/vocab.txt --system.threads 1 --training.progress_bar false
