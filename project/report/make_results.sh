#!/bin/bash
# How results.md was made: the run folders of this study's runs (linked under one EXPERIMENTS folder
# outside the checkout) and the logs of the runs whose folders were lost (study/*.log).
# In a fresh `spacy project run all` every run has its folder and `spacy project run report` suffices.
EXPERIMENTS=${1:-/root/elmo-runs/report-exp}
BILM=${2:-/root/elmo-runs/report-bilm}  # model-best -> project/report/bilm, metrics.jsonl -> bilm-study/gpu-small
python project/scripts/report.py $EXPERIMENTS project/report/results.md \
  --log project/report/study/ner.log --log project/report/study/textcat.log \
  --plot project/report/sample_efficiency.png --bilm $BILM --layers project/report/layers.json \
  --perplexity project/report/perplexity-news.json --perplexity project/report/perplexity-wikitext2.json \
  --perplexity project/report/perplexity-ptb.json --archive project/report
