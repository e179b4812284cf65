#!/bin/bash
# SST-5 and SST-2 with the SST-adapted biLM (model-best by SST dev perplexity), 3 seeds, as project.yml's textcat runs.
cd /work/main
export OMP_NUM_THREADS=1 SPACY_ELMO_THREADS=fixed
while pgrep -f "elmo-runs/adapt-sst/sst " > /dev/null; do sleep 20; done
M=/root/elmo-runs/adapt-sst/sst/model-best
X=/root/elmo-runs/study3/experiments
for task in sst5 sst2; do
  .venv/bin/python project/scripts/run_experiment.py $task-elmo-adapted project/configs/textcat_elmo.cfg project/corpus/$task/test.spacy $X --seeds 0,1,2 --gpu-id -1 --paths.train project/corpus/$task/train.spacy --paths.dev project/corpus/$task/dev.spacy --paths.elmo_options $M/options.json --paths.elmo_weights $M/weights.hdf5 --training.max_steps 20000 --system.threads 1 > /root/elmo-runs/study3/$task.log 2>&1 &
done
wait
