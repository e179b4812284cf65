#!/bin/bash
# How results.md is made, from committed records only: the study's runs with bilm/ (their
# metrics.json, kept in continued/runs/), the baselines whose folders were lost (their lines in
# study/*.log), bilm/ itself and the second pretraining stage's log (continued/pretrain/).
# Usage: make_results.sh [EXPERIMENTS...]: folders of new runs (NAME/seed-S/metrics.json) to add;
# report.py copies them into the records folder with the rest. Run from the repository root.
# STAGE=continued/stage3 writes that folder's results.md instead, for the biLM of its bilm/
# (a candidate, pretrained further from bilm/): its runs/, pretrain/metrics.jsonl and
# perplexity-*.json, the stages before it counted in the cost; the baselines are the study's
# (continued/runs/*-baseline-*.json and study/*.log), not copied into its runs/.
# In a fresh `spacy project run all` every run has its folder and `spacy project run report` suffices.
set -e
R=project/report
if [ -n "$STAGE" ]; then
  RECORDS=$R/$STAGE BILM=$R/$STAGE/bilm METRICS=$R/$STAGE/pretrain/metrics.jsonl OUT=$R/$STAGE/results.md
  EARLIER=(--earlier-stage $R/bilm-study/gpu-small/metrics.jsonl --earlier-stage $R/continued/pretrain/metrics.jsonl)
  EXTRA=()
  PERPLEXITY=$R/$STAGE
else
  RECORDS=$R/continued BILM=$R/bilm METRICS=$R/continued/pretrain/metrics.jsonl OUT=$R/results.md
  EARLIER=(--earlier-stage $R/bilm-study/gpu-small/metrics.jsonl)
  EXTRA=(--plot $R/sample_efficiency.png --layers $R/continued/layers.json)
  PERPLEXITY=$R
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/runs"
baselines=()
[ -n "$STAGE" ] && baselines=($R/continued/runs/*-baseline-seed-*.json)
for record in "$RECORDS"/runs/*.json "${baselines[@]}"; do
  [ -e "$record" ] || continue
  name=$(basename "$record" .json)
  mkdir -p "$WORK/runs/${name%-seed-*}/seed-${name##*-seed-}"
  cp "$record" "$WORK/runs/${name%-seed-*}/seed-${name##*-seed-}/metrics.json"
done
for extra in "$@"; do
  cp -r "$extra"/. "$WORK/runs/"
done
mkdir -p "$WORK/bilm"
ln -s "$(pwd)/$BILM" "$WORK/bilm/model-best"
cp "$METRICS" "$WORK/bilm/metrics.jsonl"
grep -hE "ner-baseline-|sst5-baseline|sst2-baseline|trec-baseline" $R/study/ner.log $R/study/textcat.log | grep -v "^Running" > "$WORK/baselines.log"
perplexity=()
for file in "$PERPLEXITY"/perplexity-news.json "$PERPLEXITY"/perplexity-wikitext2.json "$PERPLEXITY"/perplexity-ptb.json; do
  [ -e "$file" ] && perplexity+=(--perplexity "$file")
done
python project/scripts/report.py "$WORK/runs" "$OUT" --log "$WORK/baselines.log" --bilm "$WORK/bilm" \
  "${EARLIER[@]}" "${EXTRA[@]}" "${perplexity[@]}" --archive "$RECORDS"
rm -f "$RECORDS/pretrain/options.json"
for record in "${baselines[@]}"; do
  rm -f "$RECORDS/runs/$(basename "$record")"
done
