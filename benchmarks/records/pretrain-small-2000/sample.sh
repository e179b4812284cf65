#!/bin/bash
# Resident size (VmRSS, MB) of the two pretraining processes every 30 s, from outside.
while true; do
  for mp in false true; do
    pid=$(pgrep -f "rss/mp-$mp " | head -1)
    [ -n "$pid" ] && echo "$(date +%s) $mp $(awk '/VmRSS/ {print int($2/1024)}' /proc/$pid/status) $(tail -n 1 /root/elmo-runs/rss/mp-$mp/metrics.jsonl | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["step"])')"
  done
  sleep 30
done
