"""Tokens/s of ELMo inference: the exact path, the fast path and AllenNLP 2.10.1, side by side.

For each size (the fixture model, and the published 'small' and 'original' sizes with random
weights) it runs --batch-size real sentences (32 unless told) of 20-30 tokens as one batch,
text (token lists) in and the mixed ELMo vectors out, and prints the median tokens/s over
--repeats interleaved runs, the speed-up over AllenNLP and the largest difference from the
exact path. AllenNLP runs in its own venv (benchmarks/install_allennlp.sh) as a subprocess,
with the same weights; its column is left out when that venv is absent.

    python benchmarks/bench_bilm.py [--sizes fixture small original] [--repeats 7] [--threads 2] [--batch-size 32]

Other processes share the CPU: the load average is printed with the figures.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy
import torch

from spacy_elmo.chars import CharacterIds
from spacy_elmo.formats.allennlp import load_bilm, save_bilm
from spacy_elmo.model import BiLM, ScalarMix, preset
from spacy_elmo.model.fast import FastBiLM

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / ".." / "shared" / "data"
FIXTURE = DATA / "elmo_fixtures" / "allennlp"
CONLL = DATA / "ner" / "conll2003" / "eng.train"
ALLENNLP_PYTHON = HERE / ".venv-allennlp" / "bin" / "python"
BATCH_SIZE = 32
MIN_TOKENS, MAX_TOKENS = 20, 30
N_WARM_SENTENCES = 256

Sentences = List[List[str]]
Run = Callable[[Sentences], torch.Tensor]


def read_sentences(n: int, skip: int = 0) -> Tuple[Sentences, str]:
    """n sentences of 20-30 tokens after the first ``skip`` such sentences: from CoNLL-2003
    eng.train, else the fixture's sentences.json, else generated text."""
    if CONLL.exists():
        found, sentence = [], []
        for line in CONLL.read_text(encoding="utf-8").splitlines() + [""]:
            if line.strip() and not line.startswith("-DOCSTART-"):
                sentence.append(line.split()[0])
            elif sentence:
                if MIN_TOKENS <= len(sentence) <= MAX_TOKENS:
                    found.append(sentence)
                sentence = []
        if len(found) >= skip + n:
            return found[skip : skip + n], f"CoNLL-2003 eng.train ({CONLL})"
    if (FIXTURE / "sentences.json").exists():
        lines = [s.split() for batch in json.loads((FIXTURE / "sentences.json").read_text()) for s in batch]
        fitting = [s for s in lines if MIN_TOKENS <= len(s) <= MAX_TOKENS]
        if len(fitting) >= skip + n:
            return fitting[skip : skip + n], "fixture sentences.json"
    rng = numpy.random.default_rng(skip)
    words = "the of and to a in that is was he for it with as his on be at by had are but from or".split()
    words += "market prices rose sharply after government announced new trade figures Monday".split()
    generated = [[str(w) for w in rng.choice(words, size=rng.integers(MIN_TOKENS, MAX_TOKENS + 1))] for _ in range(n)]
    return generated, "generated text (no data folder found)"


def make_model(size: str, seed: int = 0) -> BiLM:
    if size == "fixture":
        return load_bilm(FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5").eval()
    torch.manual_seed(seed)
    return BiLM(preset(size)).eval()


def time_runs(
    runs: Dict[str, Tuple[Run, Optional[Callable[[], None]]]],
    sentences: Sentences,
    repeats: int,
    allennlp: Optional["AllenNlp"],
) -> Dict[str, List[float]]:
    """Seconds per call of each run (and of AllenNLP), interleaved so that load changes hit all
    of them alike. Each run may have a set-up step, done before each timed call, not timed."""
    seconds: Dict[str, List[float]] = {name: [] for name in runs}
    for run, setup in runs.values():  # warm-up
        if setup is not None:
            setup()
        run(sentences)
    if allennlp is not None:
        seconds[allennlp.name] = []
        allennlp.run()
    for _ in range(repeats):
        for name, (run, setup) in runs.items():
            if setup is not None:
                setup()
            start = time.perf_counter()
            run(sentences)
            seconds[name].append(time.perf_counter() - start)
        if allennlp is not None:
            seconds[allennlp.name].append(allennlp.run())
    return seconds


def model_files(model: BiLM, size: str, workdir: Path) -> Tuple[Path, Path]:
    """options.json and weights.hdf5 of the model, for AllenNLP and the spaCy component."""
    if size == "fixture":
        return FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5"
    options, weights = workdir / "options.json", workdir / "weights.hdf5"
    save_bilm(model, options, weights)
    return options, weights


def warm_cache(fast: FastBiLM, warm_sentences: Sentences) -> Callable[[], None]:
    """A set-up step that fills the token-vector cache from other sentences of the same text
    (not the timed ones): the state a long nlp.pipe run is in."""
    ids = torch.from_numpy(CharacterIds(fast.config.max_characters_per_token).batch(warm_sentences))

    def setup() -> None:
        fast.cache.clear()
        fast.embed_char_ids(ids[(ids > 0).any(dim=-1)])

    return setup


def project_runs(
    model: BiLM, warm_sentences: Sentences, with_bf16: bool
) -> Dict[str, Tuple[Run, Optional[Callable[[], None]]]]:
    chars = CharacterIds(model.config.max_characters_per_token)
    mix = ScalarMix(model.config.n_output_layers, trainable=False)

    def through(bilm: Callable) -> Run:
        def run(sentences: Sentences) -> torch.Tensor:
            out = bilm(torch.from_numpy(chars.batch(sentences)))
            return mix(out.layers, out.mask)

        return run

    def warm(fast: FastBiLM) -> Callable[[], None]:
        return warm_cache(fast, warm_sentences)

    cold = FastBiLM(model)
    fast = FastBiLM(model)
    runs = {
        "exact": (through(model), None),
        "fast, cold cache": (through(cold), cold.cache.clear),
        "fast, warm cache": (through(fast), warm(fast)),
    }
    if with_bf16:
        bf16 = FastBiLM(model, matmul_dtype=torch.bfloat16)
        runs["fast bf16, warm cache"] = (through(bf16), warm(bf16))
    return runs


def pipe_runs(
    options: Path, weights: Path, reference_model: BiLM, warm_sentences: Sentences
) -> Dict[str, Tuple[Run, Optional[Callable[[], None]]]]:
    """End to end through nlp.pipe (Docs in, doc._.elmo out) with the `elmo` component, its
    sentence feature cache off: as shipped (FastBiLM when no gradient is needed; token-vector
    cache warm from other sentences), and with the component forced onto BiLM.forward."""
    import spacy
    from spacy.tokens import Doc

    runs: Dict[str, Tuple[Run, Optional[Callable[[], None]]]] = {}
    for name in ("nlp.pipe, exact", "nlp.pipe, fast, warm cache"):
        nlp = spacy.blank("en")
        model_cfg = {
            "@architectures": "spacy-elmo.ElmoBiLM.v1",
            "options_file": str(options),
            "weight_file": str(weights),
            "cache_mb": 0,
        }
        nlp.add_pipe("elmo", config={"model": model_cfg})
        nlp.initialize()

        def run(sentences: Sentences, nlp=nlp) -> torch.Tensor:
            docs = list(nlp.pipe([Doc(nlp.vocab, words=words) for words in sentences], batch_size=len(sentences)))
            out = torch.zeros(len(docs), max(len(d) for d in docs), reference_model.config.output_dim)
            for i, doc in enumerate(docs):
                out[i, : len(doc)] = torch.from_numpy(doc._.elmo)
            return out

        holder = nlp.get_pipe("elmo").model.layers[0].shims[0]._model
        setup: Optional[Callable[[], None]] = None
        if "exact" in name:
            holder.forward = lambda char_ids, holder=holder: holder.bilm(char_ids).layers  # bypass FastBiLM
        else:
            run(warm_sentences[:1])  # the component makes its FastBiLM on its first call
            setup = warm_cache(holder._fast[0], warm_sentences)
        runs[name] = (run, setup)
    return runs


class AllenNlp:
    """AllenNLP's ELMo with the same weights, in its own venv (allennlp_elmo.py), timed one
    call at a time on request."""

    def __init__(self, options: Path, weights: Path, sentences: Sentences, threads: int, workdir: Path):
        sentence_file, output = workdir / "sentences.json", workdir / "output.npy"
        sentence_file.write_text(json.dumps(sentences))
        command = [str(ALLENNLP_PYTHON), str(HERE / "allennlp_elmo.py"), str(options), str(weights), str(sentence_file)]
        command += ["--threads", str(threads), "--output", str(output)]
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        ready = self._process.stdout.readline()
        if not ready:
            raise RuntimeError(
                f"AllenNLP worker exited with {self._process.wait()}; run {' '.join(command)} to see why."
            )
        self.name = f"AllenNLP {json.loads(ready)['version']}"
        self.output = numpy.load(output)

    def run(self) -> float:
        self._process.stdin.write("run\n")
        self._process.stdin.flush()
        return float(self._process.stdout.readline())

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait()


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sizes",
        nargs="+",
        default=["fixture", "small", "original"],
        choices=["fixture", "tiny", "small", "medium", "original"],
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="sentences per batch, for every path")
    parser.add_argument("--no-bf16", action="store_true", help="leave out the bf16 fast path")
    parser.add_argument("--no-pipe", action="store_true", help="leave out the nlp.pipe runs")
    parser.add_argument("--no-allennlp", action="store_true", help="leave out AllenNLP even if its venv exists")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    sentences, source = read_sentences(args.batch_size)
    warm_sentences, _ = read_sentences(N_WARM_SENTENCES, skip=args.batch_size)
    n_tokens = sum(len(s) for s in sentences)
    print(
        f"spacy-elmo biLM benchmark: torch {torch.__version__}, {args.threads} threads, {platform.processor() or platform.machine()}"
    )
    print(f"{len(sentences)} sentences, {n_tokens} tokens, from {source}; median of {args.repeats} runs")
    use_allennlp = ALLENNLP_PYTHON.exists() and not args.no_allennlp
    if not ALLENNLP_PYTHON.exists() and not args.no_allennlp:
        print(f"AllenNLP column left out: no {ALLENNLP_PYTHON} (make it with benchmarks/install_allennlp.sh)")
    for size in args.sizes:
        if size == "fixture" and not FIXTURE.exists():
            print(f"\n[fixture] skipped: {FIXTURE} not found")
            continue
        model = make_model(size)
        n_params = sum(p.numel() for p in model.parameters())
        print(
            f"\n[{size}] {n_params / 1e6:.1f}M parameters, lstm {model.config.lstm_dim}/{model.config.projection_dim}, "
            f"{model.config.n_highway} highway; {load()}"
        )
        runs = project_runs(model, warm_sentences, with_bf16=not args.no_bf16)
        with torch.no_grad(), tempfile.TemporaryDirectory() as workdir:
            options, weights = model_files(model, size, Path(workdir))
            if not args.no_pipe:
                runs.update(pipe_runs(options, weights, model, warm_sentences))
            reference = runs["exact"][0](sentences)
            errors = {}
            for name, (run, setup) in runs.items():
                if setup is not None:
                    setup()
                errors[name] = (run(sentences) - reference).abs().max().item()
            allen = None
            if use_allennlp:
                allen = AllenNlp(options, weights, sentences, args.threads, Path(workdir))
                errors[allen.name] = float(numpy.abs(allen.output - reference.numpy()).max())
            try:
                seconds = time_runs(runs, sentences, args.repeats, allen)
            finally:
                if allen is not None:
                    allen.close()
        allen_rate = None if allen is None else n_tokens / statistics.median(seconds[allen.name])
        exact_rate = n_tokens / statistics.median(seconds["exact"])
        print(f"  {'path':<26}{'tokens/s':>10}{'(min-max)':>18}{'vs exact':>10}{'vs AllenNLP':>13}{'max |diff|':>12}")
        for name, times in seconds.items():
            rate = n_tokens / statistics.median(times)
            spread = f"({n_tokens / max(times):.0f}-{n_tokens / min(times):.0f})"
            versus = "" if allen_rate is None else f"{rate / allen_rate:.2f}x"
            print(f"  {name:<26}{rate:>10.0f}{spread:>18}{rate / exact_rate:>9.2f}x{versus:>13}{errors[name]:>12.1e}")
        print(f"  {load()}")


if __name__ == "__main__":
    main()
