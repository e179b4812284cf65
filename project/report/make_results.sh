#!/bin/bash
# How results.md was made: the run folders of the study's runs with bilm/ (their metrics.json under
# one EXPERIMENTS folder outside the checkout; kept in continued/runs/) and, for the baselines whose
# folders were lost, their lines in study/*.log. BILM: a folder with model-best -> bilm/ and
# continued/pretrain/metrics.jsonl (the second pretraining stage; the first is bilm-study/gpu-small).
# In a fresh `spacy project run all` every run has its folder and `spacy project run report` suffices.
EXPERIMENTS=${1:-/root/elmo-runs/continued/report-exp}
BILM=${2:-/root/elmo-runs/continued/report-bilm}
BASELINES=$(mktemp)
grep -hE "ner-baseline-|sst5-baseline|sst2-baseline|trec-baseline" project/report/study/ner.log project/report/study/textcat.log | grep -v "^Running" > $BASELINES
python project/scripts/report.py $EXPERIMENTS project/report/results.md --log $BASELINES \
  --plot project/report/sample_efficiency.png --bilm $BILM \
  --earlier-stage project/report/bilm-study/gpu-small/metrics.jsonl --layers project/report/continued/layers.json \
  --perplexity project/report/perplexity-news.json --perplexity project/report/perplexity-wikitext2.json \
  --perplexity project/report/perplexity-ptb.json --archive project/report/continued
rm -f $BASELINES project/report/continued/pretrain/options.json
