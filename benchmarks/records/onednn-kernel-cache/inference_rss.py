"""Resident memory of FastBiLM over many batches of CoNLL-2003 sentences, one thread.

    python inference_rss.py bf16|fp32 BATCHES

Prints the RSS (MB) every 50 batches of 32 sentences (token cache off, so every batch runs the
whole biLM). With bf16 matmuls on CPU, oneDNN builds and keeps a kernel per operand shape.
"""

import random
import sys
from pathlib import Path

import torch

from spacy_elmo.formats.allennlp import load_bilm_dir
from spacy_elmo.model.fast import FastBiLM

ROOT = Path(__file__).resolve().parents[3]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return float("nan")


def conll_sentences() -> list:
    sentences, current = [], []
    for line in (ROOT.parent / "shared/data/ner/conll2003/eng.train").read_text().splitlines():
        parts = line.split()
        if not parts or parts[0] == "-DOCSTART-":
            if current:
                sentences.append(current)
                current = []
            continue
        current.append(parts[0])
    random.Random(0).shuffle(sentences)
    return sentences


def main(dtype_name: str, batches: int) -> None:
    torch.set_num_threads(1)
    dtype = torch.bfloat16 if dtype_name == "bf16" else None
    sentences = conll_sentences()
    fast = FastBiLM(load_bilm_dir(ROOT / "project/report/bilm").eval(), matmul_dtype=dtype, cache_size=0)
    for i in range(batches):
        fast.forward_tokens(sentences[i * 32 : (i + 1) * 32])
        if i % 50 == 0:
            print(i, round(rss_mb()), flush=True)
    print("end", round(rss_mb()))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
