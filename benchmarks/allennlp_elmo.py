"""Time AllenNLP 2.10.1's ELMo on the sentences bench_bilm.py gives it (run inside the AllenNLP
venv made by install_allennlp.sh; imports nothing from spacy_elmo).

It loads the model, writes the mixed output (batch, tokens, dim) to --output as .npy (so the
caller can check that the weights agree) and prints {"version": ...}; then for each line
"run" on stdin it runs the batch once and prints the seconds it took, so the caller can
interleave these runs with its own.
"""

import argparse
import json
import sys
import time
import warnings

import numpy
import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("options_file")
    parser.add_argument("weight_file")
    parser.add_argument("sentences", help="JSON list of token lists")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore")
    from allennlp.modules.elmo import Elmo, batch_to_ids
    from allennlp.version import VERSION

    sentences = json.loads(open(args.sentences, encoding="utf-8").read())
    elmo = Elmo(
        args.options_file, args.weight_file, num_output_representations=1, dropout=0.0, requires_grad=False
    ).eval()
    with torch.no_grad():
        output = elmo(batch_to_ids(sentences))["elmo_representations"][0]  # also the warm-up
        numpy.save(args.output, output.numpy())
        print(json.dumps({"version": VERSION}), flush=True)
        for line in sys.stdin:
            if line.strip() != "run":
                raise SystemExit(f"Expected 'run' on stdin, got {line!r}.")
            start = time.perf_counter()
            elmo(batch_to_ids(sentences))
            print(time.perf_counter() - start, flush=True)


if __name__ == "__main__":
    main()
