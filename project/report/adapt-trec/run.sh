#!/bin/bash
# Domain adaptation of the committed biLM on TREC's training questions (the 500 held-out dev questions
# excluded), model-best by perplexity on those dev questions; then TREC with it, 3 seeds, as project.yml's textcat runs.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
A=/root/elmo-runs/adapt-trec
B=project/report/bilm
.venv/bin/python project/scripts/task_text.py project/corpus/trec/train.spacy $A/trec.train.txt
.venv/bin/python project/scripts/task_text.py project/corpus/trec/dev.spacy $A/trec.dev.txt
.venv/bin/python -m spacy_elmo pretrain project/configs/pretrain_adapt.cfg $A/trec --paths.train $A/trec.train.txt --paths.dev $A/trec.dev.txt --paths.init_bilm $B --paths.init_softmax $B/softmax_weights.hdf5 --paths.vocab $B/vocab.txt --system.threads 1 --training.progress_bar false > $A/pretrain.log 2>&1
M=$A/trec/model-best
.venv/bin/python project/scripts/run_experiment.py trec-elmo-adapted project/configs/textcat_elmo.cfg project/corpus/trec/test.spacy $A/experiments --seeds 0,1,2 --gpu-id -1 --paths.train project/corpus/trec/train.spacy --paths.dev project/corpus/trec/dev.spacy --paths.elmo_options $M/options.json --paths.elmo_weights $M/weights.hdf5 --training.max_steps 20000 --system.threads 1 > $A/trec.log 2>&1
