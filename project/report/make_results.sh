#!/bin/bash
# How results.md is made, from committed records only: the study's runs with bilm/ (their
# metrics.json, kept in continued/runs/), the baselines whose folders were lost (their lines in
# study/*.log), bilm/ itself and the second pretraining stage's log (continued/pretrain/).
# Usage: make_results.sh [EXPERIMENTS...]: folders of new runs (NAME/seed-S/metrics.json) to add;
# report.py copies them into continued/runs/ with the rest. Run from the repository root.
# In a fresh `spacy project run all` every run has its folder and `spacy project run report` suffices.
set -e
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for record in project/report/continued/runs/*.json; do
  name=$(basename "$record" .json)
  mkdir -p "$WORK/runs/${name%-seed-*}/seed-${name##*-seed-}"
  cp "$record" "$WORK/runs/${name%-seed-*}/seed-${name##*-seed-}/metrics.json"
done
for extra in "$@"; do
  cp -r "$extra"/. "$WORK/runs/"
done
mkdir -p "$WORK/bilm"
ln -s "$(pwd)/project/report/bilm" "$WORK/bilm/model-best"
cp project/report/continued/pretrain/metrics.jsonl "$WORK/bilm/metrics.jsonl"
grep -hE "ner-baseline-|sst5-baseline|sst2-baseline|trec-baseline" project/report/study/ner.log project/report/study/textcat.log | grep -v "^Running" > "$WORK/baselines.log"
python project/scripts/report.py "$WORK/runs" project/report/results.md --log "$WORK/baselines.log" \
  --plot project/report/sample_efficiency.png --bilm "$WORK/bilm" \
  --earlier-stage project/report/bilm-study/gpu-small/metrics.jsonl --layers project/report/continued/layers.json \
  --perplexity project/report/perplexity-news.json --perplexity project/report/perplexity-wikitext2.json \
  --perplexity project/report/perplexity-ptb.json --archive project/report/continued
rm -f project/report/continued/pretrain/options.json
