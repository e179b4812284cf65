#!/bin/bash
# Domain adaptation of a continued biLM on a task's training sentences (one thread), as
# ../adapt/run.sh and ../adapt-{sst,trec}/run.sh did for the committed biLM; model-best by
# perplexity on the task's dev sentences. TASK: conll (CoNLL-2003, the default), sst (SST-5's
# sentences; SST-2's are a subset) or trec. FROM: the biLM folder; SOFTMAX and VOCAB: its softmax
# and vocabulary (FROM's own by default, as a pretraining run's model-best holds them); OUT: the
# adaptation's output folder. Arguments: further config overrides (e.g. --training.max_steps 600).
set -e
cd /work/main
export OMP_NUM_THREADS=1
R=/root/elmo-runs/continued
T=${TASK:-conll}
case $T in
  conll) corpus=ner ;;
  sst) corpus=sst5 ;;
  trec) corpus=trec ;;
  *) echo "Unknown TASK '$T': conll, sst or trec." >&2; exit 2 ;;
esac
mkdir -p $R
[ -s $R/$T.train.txt ] || .venv/bin/python project/scripts/task_text.py project/corpus/$corpus/train.spacy $R/$T.train.txt
[ -s $R/$T.dev.txt ] || .venv/bin/python project/scripts/task_text.py project/corpus/$corpus/dev.spacy $R/$T.dev.txt
.venv/bin/python -m spacy_elmo pretrain project/configs/pretrain_adapt.cfg "${OUT:-$R/adapt-$T}" \
  --paths.train $R/$T.train.txt --paths.dev $R/$T.dev.txt --paths.init_bilm "$FROM" \
  --paths.init_softmax "${SOFTMAX:-$FROM/softmax_weights.hdf5}" --paths.vocab "${VOCAB:-$FROM/vocab.txt}" \
  --system.threads 1 --training.progress_bar false "$@"
