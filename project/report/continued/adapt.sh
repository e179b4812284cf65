#!/bin/bash
# Domain adaptation of a continued biLM on CoNLL-2003's training sentences (one thread), as
# ../adapt/run.sh did for the committed biLM. FROM: the biLM folder; SOFTMAX and VOCAB: its
# softmax and vocabulary (FROM's own by default, as a pretraining run's model-best holds them);
# OUT: the adaptation's output folder.
set -e
cd /work/main
export OMP_NUM_THREADS=1
R=/root/elmo-runs/continued
mkdir -p $R
[ -s $R/conll.train.txt ] || .venv/bin/python project/scripts/task_text.py project/corpus/ner/train.spacy $R/conll.train.txt
[ -s $R/conll.dev.txt ] || .venv/bin/python project/scripts/task_text.py project/corpus/ner/dev.spacy $R/conll.dev.txt
.venv/bin/python -m spacy_elmo pretrain project/configs/pretrain_adapt.cfg "${OUT:-$R/adapt-conll}" \
  --paths.train $R/conll.train.txt --paths.dev $R/conll.dev.txt --paths.init_bilm "$FROM" \
  --paths.init_softmax "${SOFTMAX:-$FROM/softmax_weights.hdf5}" --paths.vocab "${VOCAB:-$FROM/vocab.txt}" \
  --system.threads 1 --training.progress_bar false
