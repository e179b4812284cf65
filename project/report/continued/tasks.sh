#!/bin/bash
# The study's task runs with the continued biLM (copied to /root/elmo-runs/continued/bilm), one thread each.
# Usage: tasks.sh SETTING..., SETTING one of ner-100pct ner-10pct sst5 (SEEDS=0,1,2 by default).
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
B=/root/elmo-runs/continued/bilm
run() {  # NAME CONFIG CORPUS TRAIN_FILE
  .venv/bin/python project/scripts/run_experiment.py "$1" "project/configs/$2" "project/corpus/$3/test.spacy" \
    /root/elmo-runs/continued/experiments --seeds "${SEEDS:-0,1,2}" --gpu-id -1 \
    --paths.train "project/corpus/$3/$4" --paths.dev "project/corpus/$3/dev.spacy" \
    --paths.elmo_options $B/options.json --paths.elmo_weights $B/weights.hdf5 --training.max_steps 20000
}
for setting in "$@"; do
  case $setting in
    ner-100pct) run ner-elmo-100pct ner_elmo.cfg ner train.spacy ;;
    ner-10pct) run ner-elmo-10pct ner_elmo.cfg ner train-10pct.spacy ;;
    sst5) run sst5-elmo textcat_elmo.cfg sst5 train.spacy ;;
    *) echo "Unknown setting '$setting': use ner-100pct, ner-10pct or sst5." >&2; exit 2 ;;
  esac
done
