#!/bin/bash
# The study's task runs with the continued biLM, one thread each.
# Usage: tasks.sh SETTING..., SETTING one of ner-100pct ner-10pct sst5 ner-100pct-adapted (SEEDS=0,1,2 by default).
# BILM: the biLM folder (/root/elmo-runs/continued/bilm by default), ADAPTED: the biLM adapted
# to CoNLL's training text (adapt.sh's model-best), EXPERIMENTS: where the runs go.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
B=${BILM:-/root/elmo-runs/continued/bilm}
A=${ADAPTED:-/root/elmo-runs/continued/adapt-conll/model-best}
run() {  # NAME CONFIG CORPUS TRAIN_FILE BILM
  .venv/bin/python project/scripts/run_experiment.py "$1" "project/configs/$2" "project/corpus/$3/test.spacy" \
    "${EXPERIMENTS:-/root/elmo-runs/continued/experiments}" --seeds "${SEEDS:-0,1,2}" --gpu-id -1 \
    --paths.train "project/corpus/$3/$4" --paths.dev "project/corpus/$3/dev.spacy" \
    --paths.elmo_options "$5/options.json" --paths.elmo_weights "$5/weights.hdf5" --training.max_steps 20000
}
for setting in "$@"; do
  case $setting in
    ner-100pct) run ner-elmo-100pct ner_elmo.cfg ner train.spacy "$B" ;;
    ner-10pct) run ner-elmo-10pct ner_elmo.cfg ner train-10pct.spacy "$B" ;;
    sst5) run sst5-elmo textcat_elmo.cfg sst5 train.spacy "$B" ;;
    ner-100pct-adapted) run ner-elmo-adapted-100pct ner_elmo.cfg ner train.spacy "$A" ;;
    *) echo "Unknown setting '$setting': use ner-100pct, ner-10pct, sst5 or ner-100pct-adapted." >&2; exit 2 ;;
  esac
done
