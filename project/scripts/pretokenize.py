"""Pre-tokenise text as pretraining would: one sentence per line, tokens joined by a space.

    python project/scripts/pretokenize.py INPUT OUTPUT [--lang en]

INPUT is anything `pretrain` reads (.txt, .txt.gz, .jsonl, a folder); the tokens come from the
pretraining default `spacy-elmo.SpacySentences.v1` (spacy.blank(lang) + sentencizer), so a run
with `[tokenizer] @misc = "spacy-elmo.WhitespaceSentences.v1"` on OUTPUT sees the same
sentences and tokens without needing spaCy, e.g. on a GPU machine. A token holding whitespace
other than a space (rare) has it removed, so that splitting the line gives the token back.
"""

import argparse
import sys
from pathlib import Path

from spacy_elmo.atomic import atomic_write
from spacy_elmo.pretrain.corpus import TextLines
from spacy_elmo.pretrain.sentences import spacy_sentences


def pretokenize(source: Path, target: Path, lang: str = "en") -> dict:
    lines = TextLines(source)
    split = spacy_sentences(lang)
    counts = {"sentences": 0, "tokens": 0, "tokens_with_whitespace": 0}

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as out:
            for sentences in split(text for _, text in lines):
                for sentence in sentences:
                    tokens = []
                    for token in sentence:
                        if len(token.split()) != 1:
                            counts["tokens_with_whitespace"] += 1
                            token = "".join(token.split())
                        tokens.append(token)
                    out.write(" ".join(tokens) + "\n")
                    counts["sentences"] += 1
                    counts["tokens"] += len(tokens)

    atomic_write(target, write)
    counts["skipped_lines"] = dict(lines.skipped)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--lang", default="en")
    args = parser.parse_args()
    counts = pretokenize(args.input, args.output, args.lang)
    print(f"{args.input} -> {args.output}: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
