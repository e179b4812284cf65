"""The study's test scores per system and seed, read from the run logs in this folder.

    python project/report/study/scores_from_logs.py project/report/study/ner.log project/report/study/textcat.log

Each log is what `spacy project run ner` / `textcat` printed: a line `<system> seed <s>: {test
scores}` per run (the scores cut after 200 characters). NER: ents_f; text classification:
cats_micro_p, which for these single-label tasks equals micro recall, micro F and accuracy.
"""

import re
import statistics
import sys
from typing import Dict

scores: Dict[str, Dict[int, float]] = {}
for path in sys.argv[1:]:
    for line in open(path, encoding="utf-8"):
        match = re.match(r"^(\S+) seed (\d+): (\{.*)", line)
        if match:
            system, seed, text = match.group(1), int(match.group(2)), match.group(3)
            metric = "ents_f" if system.startswith("ner") else "cats_micro_p"
            scores.setdefault(system, {})[seed] = 100 * float(re.search(rf'"{metric}": ([0-9.]+)', text).group(1))
for system, by_seed in scores.items():
    values = [by_seed[s] for s in sorted(by_seed)]
    per_seed = ", ".join(f"{s}: {by_seed[s]:.2f}" for s in sorted(by_seed))
    print(f"{system}: {statistics.mean(values):.2f} ± {statistics.stdev(values):.2f} (seeds {per_seed})")
