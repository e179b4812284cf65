#!/bin/bash
# How results.md is made, from committed records only: the study's runs with bilm/ (the third
# pretraining stage's weights: their metrics.json, kept in continued/stage3/runs/), the runs that
# do not depend on the biLM (the baselines and MiniLM's, kept in continued/runs/; the baselines
# whose folders were lost, from their lines in study/*.log; a baseline rerun on the ELMo side's
# host, kept in continued/stage3/runs/, replaces both), bilm/ itself and the three
# pretraining stages' logs. Usage: make_results.sh [EXPERIMENTS...]: folders of new runs
# (NAME/seed-S/metrics.json) to add; report.py copies them into the records folder with the rest.
# The runs of a second CPU model (continued/stage3/runs-amd/: the adapted SST-5, SST-2 and TREC runs
# with baselines rerun there, and earlier ELMo runs of that host) are compared among themselves.
# Run from the repository root. In a fresh `spacy project run all` every run has its folder and
# `spacy project run report` suffices. results-second-stage.md and results-first-bilm.md are the
# study as it was with the earlier weights (git history has the make_results.sh of each).
set -e
R=project/report
RECORDS=$R/continued/stage3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/runs"
shared=($R/continued/runs/*-baseline-seed-*.json $R/continued/runs/*-trf-*-seed-*.json)
own=$(cd "$RECORDS/runs" && ls)
# A run of this study's records replaces a shared record of the same name (e.g. a baseline rerun on
# the host that ran the ELMo side).
for record in "${shared[@]}" "$RECORDS"/runs/*.json; do
  [ -e "$record" ] || continue
  name=$(basename "$record" .json)
  mkdir -p "$WORK/runs/${name%-seed-*}/seed-${name##*-seed-}"
  cp "$record" "$WORK/runs/${name%-seed-*}/seed-${name##*-seed-}/metrics.json"
done
for extra in "$@"; do
  cp -r "$extra"/. "$WORK/runs/"
done
mkdir -p "$WORK/bilm"
ln -s "$(pwd)/$R/bilm" "$WORK/bilm/model-best"
cp "$RECORDS/pretrain/metrics.jsonl" "$WORK/bilm/metrics.jsonl"
grep -hE "ner-baseline-|sst5-baseline|sst2-baseline|trec-baseline" $R/study/ner.log $R/study/textcat.log | grep -v "^Running" > "$WORK/baselines.log"
perplexity=()
for file in $R/perplexity-news.json $R/perplexity-wikitext2.json $R/perplexity-ptb.json; do
  [ -e "$file" ] && perplexity+=(--perplexity "$file")
done
python project/scripts/report.py "$WORK/runs" $R/results.md --log "$WORK/baselines.log" --bilm "$WORK/bilm" \
  --earlier-stage $R/bilm-study/gpu-small/metrics.jsonl --earlier-stage $R/continued/pretrain/metrics.jsonl \
  --plot $R/sample_efficiency.png --layers $RECORDS/layers.json "${perplexity[@]}" --archive "$RECORDS" \
  --second-host "$RECORDS/runs-amd"
rm -f "$RECORDS/pretrain/options.json"
for record in "${shared[@]}"; do
  name=$(basename "$record")
  grep -qxF "$name" <<< "$own" || rm -f "$RECORDS/runs/$name"
done
