#!/bin/bash
# Domain adaptation of the committed biLM on CoNLL-2003 train text (one thread).
cd /work/main
export OMP_NUM_THREADS=1
B=project/report/bilm
.venv/bin/python -m spacy_elmo pretrain project/configs/pretrain_adapt.cfg /root/elmo-runs/adapt/conll --paths.train /root/elmo-runs/adapt/conll.train.txt --paths.dev /root/elmo-runs/adapt/conll.dev.txt --paths.init_bilm $B --paths.init_softmax $B/softmax_weights.hdf5 --paths.vocab $B/vocab.txt --system.threads 1 --training.progress_bar false
