#!/bin/bash
# The study's task runs with the continued biLM, one thread each.
# Usage: tasks.sh SETTING..., SETTING one of ner-100pct ner-10pct ner-1pct wnut17 sst5 sst2 trec,
# ner-100pct-adapted ner-10pct-adapted ner-1pct-adapted sst5-adapted sst2-adapted trec-adapted,
# or baseline-ner-100pct baseline-ner-10pct baseline-ner-1pct baseline-wnut17 baseline-sst5 baseline-sst2
# baseline-trec (the same NER / textcat pipeline without ELMo).
# SEEDS=0,1,2 by default. BILM: the biLM folder (the committed biLM, ../bilm/, by default);
# ADAPTED, ADAPTED_SST, ADAPTED_TREC: the biLM adapted to CoNLL's, SST's and TREC's training
# text (adapt.sh's model-best for each TASK); EXPERIMENTS: where the runs go,
# TEXTCAT: extra overrides for every textcat run (e.g. the pooling variant).
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
B=${BILM:-project/report/bilm}
A=${ADAPTED:-/root/elmo-runs/continued/adapt-conll-mixed/model-best}
A_SST=${ADAPTED_SST:-/root/elmo-runs/continued/adapt-sst/model-best}
A_TREC=${ADAPTED_TREC:-/root/elmo-runs/continued/adapt-trec/model-best}
run() {  # NAME CONFIG CORPUS TRAIN_FILE [BILM] [OVERRIDES...]
  local name=$1 config=$2 corpus=$3 train=$4 bilm=$5
  shift 5
  local elmo=()
  [ -n "$bilm" ] && elmo=(--paths.elmo_options "$bilm/options.json" --paths.elmo_weights "$bilm/weights.hdf5")
  .venv/bin/python project/scripts/run_experiment.py "$name" "project/configs/$config" "project/corpus/$corpus/test.spacy" \
    "${EXPERIMENTS:-/root/elmo-runs/continued/experiments}" --seeds "${SEEDS:-0,1,2}" --gpu-id -1 \
    --paths.train "project/corpus/$corpus/$train" --paths.dev "project/corpus/$corpus/dev.spacy" \
    "${elmo[@]}" --training.max_steps 20000 "$@"
}
read -r -a textcat <<< "${TEXTCAT:-}"
for setting in "$@"; do
  case $setting in
    ner-100pct) run ner-elmo-100pct ner_elmo.cfg ner train.spacy "$B" ;;
    ner-10pct) run ner-elmo-10pct ner_elmo.cfg ner train-10pct.spacy "$B" ;;
    ner-1pct) run ner-elmo-1pct ner_elmo.cfg ner train-1pct.spacy "$B" ;;
    wnut17) run wnut17-elmo ner_elmo.cfg wnut17 train.spacy "$B" ;;
    ner-100pct-adapted) run ner-elmo-adapted-100pct ner_elmo.cfg ner train.spacy "$A" ;;
    ner-10pct-adapted) run ner-elmo-adapted-10pct ner_elmo.cfg ner train-10pct.spacy "$A" ;;
    ner-1pct-adapted) run ner-elmo-adapted-1pct ner_elmo.cfg ner train-1pct.spacy "$A" ;;
    sst5-adapted | sst2-adapted)
      run "${setting%-adapted}-elmo-adapted" textcat_elmo.cfg "${setting%-adapted}" train.spacy "$A_SST" "${textcat[@]}" ;;
    trec-adapted) run trec-elmo-adapted textcat_elmo.cfg trec train.spacy "$A_TREC" "${textcat[@]}" ;;
    sst5 | sst2 | trec) run "$setting-elmo" textcat_elmo.cfg "$setting" train.spacy "$B" "${textcat[@]}" ;;
    baseline-ner-100pct) run ner-baseline-100pct ner.cfg ner train.spacy "" ;;
    baseline-ner-10pct) run ner-baseline-10pct ner.cfg ner train-10pct.spacy "" ;;
    baseline-ner-1pct) run ner-baseline-1pct ner.cfg ner train-1pct.spacy "" ;;
    baseline-wnut17) run wnut17-baseline ner.cfg wnut17 train.spacy "" ;;
    baseline-sst5 | baseline-sst2 | baseline-trec)
      run "${setting#baseline-}-baseline" textcat.cfg "${setting#baseline-}" train.spacy "" "${textcat[@]}" ;;
    *) echo "Unknown setting '$setting': see the usage at the top of $0." >&2; exit 2 ;;
  esac
done
