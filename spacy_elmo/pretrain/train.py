"""The pretraining loop: both LMs, sampled softmax, clipping, evaluation, checkpoints, resume.

OUTPUT_DIR receives vocab.txt, metrics.jsonl, checkpoint.pt (everything needed to resume:
model, optimizer, sampler, data position and carried LSTM state, per process) and the model
folders model-last and model-best (see export.py). Under torchrun, every process trains on
its rows of each batch with DistributedDataParallel; only rank 0 writes files.
"""

import json
import math
import os
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

import numpy
import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from ..chars import CharacterIds
from ..formats.allennlp import load_bilm_dir
from ..model import BiLM, LstmState
from ..threads import ThreadGovernor
from .batches import RowStreams, WindowBatcher
from .config import PretrainSettings
from .corpus import CorpusError, TextLines
from .distributed import Processes, start_processes, stop_processes
from .evaluate import perplexity, text_sentences
from .export import METRICS, VOCAB, save_model_dir
from .host import HostProbe
from .language_model import BiLanguageModel
from .memory import release_freed_memory, resident_mb, reuse_large_blocks
from .softmax import LogUniformSampler
from .vocab import Vocabulary

CHECKPOINT = "checkpoint.pt"
SEGMENTS = "segments.jsonl"  # one line per run segment: steps, tokens, wall and CPU time, load


class TrainingDiverged(RuntimeError):
    """The loss or the gradient norm became NaN or infinite."""


@dataclass
class Progress:
    step: int = 0
    tokens: int = 0
    elapsed: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time (all its threads), over every segment
    best_perplexity: float = math.inf
    loss_sum: float = 0.0  # train loss summed over the steps since the last log line
    loss_steps: int = 0
    tokens_since_log: int = 0
    last_record: Dict[str, Any] = field(default_factory=dict)


def pretrain(settings: PretrainSettings, output_dir: Path) -> Dict[str, Any]:
    """Train until training.max_steps and return the last metrics record."""
    processes = start_processes(settings.system.device)
    try:
        return Trainer(settings, Path(output_dir), processes).run()
    finally:
        stop_processes()


class Trainer:
    def __init__(self, settings: PretrainSettings, output_dir: Path, processes: Processes):
        self.settings = settings
        self.out = output_dir
        self.processes = processes
        data = settings.data
        if data.batch_size % processes.world_size:
            raise ValueError(
                f"data.batch_size ({data.batch_size}) must be a multiple of the number of processes ({processes.world_size})."
            )
        if not settings.paths.train:
            raise ValueError("No training text: pass --paths.train PATH (a .txt, .txt.gz, .jsonl file or a folder).")
        if not settings.training.train_bilm and not settings.paths.init_bilm:
            raise ValueError(
                "training.train_bilm = false trains only the softmax of a given biLM: pass --paths.init_bilm "
                "BILM_DIR (options.json + weights.hdf5), or set training.train_bilm = true."
            )
        if settings.system.threads > 0:
            torch.set_num_threads(settings.system.threads)
        # threads 0 on the CPU: torch's default, lowered to the cores other processes leave free
        self.governor = ThreadGovernor(enabled=settings.system.threads == 0 and processes.device.type == "cpu")
        if processes.device.type == "cpu":
            reuse_large_blocks()  # the step's largest tensors from the heap, not fresh mappings
        _seed(settings.system.seed)
        self.out.mkdir(parents=True, exist_ok=True)
        self.checkpoint_path = self.out / CHECKPOINT
        self.resuming = settings.training.resume and self.checkpoint_path.exists()
        if not self.resuming and processes.is_main:
            # A fresh start: an earlier run's log and checkpoint would be mixed into this one's.
            for stale in (self.out / METRICS, self.checkpoint_path):
                stale.unlink(missing_ok=True)

        self.train_lines = TextLines(
            settings.paths.train,
            max_line_bytes=data.max_line_bytes,
            text_field=data.text_field,
            interleave=data.interleave_files,
            segments=data.segments_per_file,
        )
        self.data_order = self._data_order()  # the files as this run read them: kept with each checkpoint
        self.dev_lines = (
            TextLines(settings.paths.dev, max_line_bytes=data.max_line_bytes, text_field=data.text_field)
            if settings.paths.dev
            else None
        )
        if self.dev_lines is not None:  # fail now rather than at the first evaluation
            if next(iter(self.dev_lines), None) is None:
                detail = self.dev_lines.describe_skipped() or "every line is blank"
                raise CorpusError(f"No usable dev text in {', '.join(map(str, self.dev_lines.files))}: {detail}.")
            self.dev_lines.skipped.clear()  # the first evaluation counts them
        self.vocab = self._vocabulary()
        self.lm = self._language_model().to(processes.device)
        self.optimizer = settings.optimizer([p for p in self.lm.parameters() if p.requires_grad])
        self.host = HostProbe(self.matmul_dtype) if processes.device.type == "cpu" else None
        self.sampler = LogUniformSampler(len(self.vocab), torch.Generator().manual_seed(settings.system.seed + 1))
        per_rank = data.batch_size // processes.world_size
        rows = range(processes.rank * per_rank, (processes.rank + 1) * per_rank)
        streams = RowStreams(self.train_lines, settings.tokenizer, rows=rows, n_rows=data.batch_size)
        chars = CharacterIds(self.lm.bilm.config.max_characters_per_token)
        self.batcher = WindowBatcher(streams, self.vocab, chars, unroll_steps=data.unroll_steps, mode=data.mode)
        self.state: Optional[LstmState] = None
        self.progress = Progress()
        self.checkpoint_step: Optional[int] = None
        self.checkpoint_time = time.monotonic()
        if self.resuming:
            self._load_checkpoint()
        self.model = DistributedDataParallel(self.lm, broadcast_buffers=False) if processes.distributed else self.lm

    # -- set-up ---------------------------------------------------------------------------

    def _vocabulary(self) -> Vocabulary:
        if self.settings.paths.vocab:
            return Vocabulary.from_disk(self.settings.paths.vocab)
        saved = self.out / VOCAB
        if not self.resuming:
            if self.processes.is_main:
                self._log(f"Building the vocabulary from {', '.join(map(str, self.train_lines.files))}")
                vocab = Vocabulary.build(
                    text_sentences(self.train_lines, self.settings.tokenizer),
                    max_size=self.settings.vocab.max_size,
                    min_count=self.settings.vocab.min_count,
                )
                vocab.to_disk(saved)
                self._log(f"Vocabulary: {len(vocab)} words -> {saved}")
                self._report_skipped(self.train_lines)
            self.processes.barrier()
        return Vocabulary.from_disk(saved)

    def _language_model(self) -> BiLanguageModel:
        paths = self.settings.paths
        if paths.init_bilm:
            folder = Path(paths.init_bilm)
            bilm = load_bilm_dir(folder)
            self._log(f"Fine-tuning the biLM from {folder} (its options replace [model])")
        else:
            bilm = BiLM(self.settings.model)
        system = self.settings.system
        self.matmul_dtype = bf16_matmuls(system.mixed_precision, self.processes.device)
        if self.matmul_dtype is not None:
            self._log(
                f"Mixed precision: bf16 matmuls, fp32 weights and state ({'fast' if system.fast_path else 'exact'} path)"
            )
        fast_dtype = self.matmul_dtype if system.fast_path else None
        lm = BiLanguageModel(
            bilm,
            len(self.vocab),
            dropout=self.settings.objective.dropout,
            fast=system.fast_path,
            matmul_dtype=fast_dtype,
        )
        if paths.init_softmax:
            if not paths.vocab:
                raise ValueError(
                    "paths.init_softmax needs paths.vocab: the vocab.txt whose words are the softmax rows."
                )
            lm.softmax.load(paths.init_softmax)
        if not self.settings.training.train_bilm:
            bilm.requires_grad_(False)
            self._log("The biLM stays as loaded (training.train_bilm = false): only the softmax learns")
        return lm

    # -- the loop -------------------------------------------------------------------------

    def run(self) -> Dict[str, Any]:
        t = self.settings.training
        if self.progress.step >= t.max_steps:
            self._log(f"Checkpoint is at step {self.progress.step} >= training.max_steps {t.max_steps}; nothing to do.")
            return self.progress.last_record
        if self.settings.paths.init_bilm and self.progress.step == 0 and self.progress.best_perplexity == math.inf:
            self._evaluate_initial_bilm()
        bar = tqdm(
            total=t.max_steps,
            initial=self.progress.step,
            disable=not (t.progress_bar and self.processes.is_main),
            unit="step",
            dynamic_ncols=True,
        )
        started = time.perf_counter() - self.progress.elapsed
        cpu_started = time.process_time() - self.progress.cpu_seconds
        log_start = time.perf_counter()
        record: Dict[str, Any] = {}
        segment = self._segment_start()
        deadline = time.perf_counter() + t.max_minutes * 60 if t.max_minutes > 0 else math.inf
        ended = "finished"
        with StopSignals() as signals:
            while self.progress.step < t.max_steps:
                self.governor.update()
                loss, n_tokens = self.train_step()
                pr = self.progress
                pr.step += 1
                pr.tokens += n_tokens
                pr.tokens_since_log += n_tokens
                pr.loss_sum += loss
                pr.loss_steps += 1
                pr.elapsed = time.perf_counter() - started
                pr.cpu_seconds = time.process_time() - cpu_started
                # Every process decides together: a signal on any one, or the time budget spent.
                flags = self.processes.sum(
                    torch.tensor([float(signals.received), float(time.perf_counter() >= deadline)])
                )
                stop, time_up = bool(flags[0] > 0), bool(flags[1] > 0)
                evaluate = pr.step % t.eval_every == 0 or pr.step == t.max_steps or time_up
                if pr.step % t.log_every == 0 or evaluate:
                    release_freed_memory()
                    record = self._record(pr.tokens_since_log / max(time.perf_counter() - log_start, 1e-9))
                    if evaluate:
                        record["dev_perplexity"] = self._evaluate()
                    self._write_record(record)
                    bar.set_postfix(loss=f"{record['train_loss']:.3f}", tok_s=f"{record['tokens_per_second']:.0f}")
                    if evaluate:
                        self._save(record)
                    elif self._checkpoint_due():
                        self._save_checkpoint()
                    log_start = time.perf_counter()  # tokens/s counts training time only
                bar.update(1)
                if time_up:
                    ended = f"time budget of {t.max_minutes:g} minutes spent"
                    self._log(
                        f"Stopped at step {pr.step}: training.max_minutes ({t.max_minutes:g}) spent; model-last and checkpoint written."
                    )
                    break
                if stop:
                    if self.checkpoint_step != pr.step:
                        self._save_checkpoint()
                    bar.close()
                    self._segment_end(segment, f"stopped by {signals.name}")
                    self._log(f"Stopped at step {pr.step}; checkpoint kept; rerun the same command to resume.")
                    raise TrainingStopped(pr.step, signals.number)
        bar.close()
        self._segment_end(segment, ended)
        for lines in (self.train_lines, self.dev_lines):
            if lines is not None:
                self._report_skipped(lines)
        return record

    def _evaluate_initial_bilm(self) -> None:
        """Fine-tuning: the dev perplexity of the biLM as given, recorded as step 0 (train_loss
        null); it is model-best until fine-tuning beats it."""
        record = self._record(0.0)
        record["train_loss"] = None
        record["dev_perplexity"] = self._evaluate()
        if record["dev_perplexity"] is not None:
            self._log(f"Dev perplexity before fine-tuning: {record['dev_perplexity']['mean']:.1f}")
            self._write_record(record)
            self._save(record)

    def train_step(self) -> Tuple[float, int]:
        """One optimizer step; returns the mean NLL per target (both directions, all
        processes) and the number of targets."""
        batch = self.batcher.next_batch()
        n_local = batch.n_targets
        n_global = int(self.processes.sum(torch.tensor(float(n_local), dtype=torch.float64)))
        negatives = None
        if 0 < self.settings.objective.n_negatives < len(self.vocab):
            negatives = self.sampler.sample(self.settings.objective.n_negatives)
        state = self.state if self.batcher.stateful else None
        with self._autocast():
            nll, state = self.model(batch, state, negatives=negatives, sampler=self.sampler)
        # The mean NLL over both directions' targets, times unroll_steps as in bilm-tf (which
        # scales Adagrad's steps). Each process divides by the global count; DDP averages
        # gradients over processes, hence the * world size.
        loss = nll.sum() / (2 * n_global) * self.settings.data.unroll_steps * self.processes.world_size
        total = float(self.processes.sum(nll.detach().sum().double())) / (2 * n_global)
        if not math.isfinite(total):
            raise TrainingDiverged(self._diverged("loss", total))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        max_norm = self.settings.training.grad_clip or math.inf  # 0: no clipping (the norm is still checked)
        norm = torch.nn.utils.clip_grad_norm_(self.lm.parameters(), max_norm)
        if not torch.isfinite(norm):
            raise TrainingDiverged(self._diverged("gradient norm", float(norm)))
        self.optimizer.step()
        if self.batcher.stateful:
            self.state = LstmState(state.hidden.detach(), state.cell.detach())
        return total, n_global

    def _autocast(self):
        """bf16 autocast for the exact path (the fast path casts its own matmuls)."""
        enabled = self.matmul_dtype is not None and not self.settings.system.fast_path
        return torch.autocast(self.processes.device.type, dtype=torch.bfloat16, enabled=enabled)

    def _diverged(self, what: str, value: float) -> str:
        saved = (
            f"the last good checkpoint is {self.checkpoint_path} (step {self.checkpoint_step})"
            if self.checkpoint_step is not None
            else "no checkpoint was written yet"
        )
        return (
            f"Training diverged: the {what} is {value} at step {self.progress.step + 1}; stopped without saving, {saved}. "
            "Lower the learning rate ([optimizer] lr) or training.grad_clip, then resume."
        )

    def _evaluate(self) -> Optional[Dict[str, float]]:
        if self.dev_lines is None:
            return None
        t = self.settings.training
        sentences = text_sentences(
            self.dev_lines, self.settings.tokenizer, shard=self.processes.rank, n_shards=self.processes.world_size
        )
        limit = -(-t.max_dev_sentences // self.processes.world_size) if t.max_dev_sentences else 0
        source = f"the dev text {', '.join(map(str, self.dev_lines.files))}"
        try:
            result = perplexity(
                self.lm,
                sentences,
                self.vocab,
                batch_size=t.dev_batch_size,
                max_sentences=limit,
                processes=self.processes,
                source=source,
            )
        except CorpusError as err:
            raise CorpusError(f"{err} {self.dev_lines.describe_skipped()}".strip()) from None
        return result.to_dict()

    # -- records, models and checkpoints --------------------------------------------------

    def _record(self, tokens_per_second: float) -> Dict[str, Any]:
        pr = self.progress
        record = {
            "step": pr.step,
            "tokens": pr.tokens,
            "train_loss": pr.loss_sum / max(pr.loss_steps, 1),
            "dev_perplexity": None,
            "tokens_per_second": tokens_per_second,
            "elapsed_seconds": pr.elapsed,
            "cpu_seconds": pr.cpu_seconds,
            "rss_mb": resident_mb(),
            "load_average": _load_average(),
            # a fixed matmul's speed follows the host, page faults per step the process
            "matmul_gflops": round(self.host.matmul_gflops(), 1) if self.host else None,
            "minor_faults_per_step": None,
        }
        faults = self.host.faults_since_last_call() if self.host else None
        if faults is not None and pr.loss_steps:
            record["minor_faults_per_step"] = round(faults / pr.loss_steps)
        pr.loss_sum, pr.loss_steps, pr.tokens_since_log = 0.0, 0, 0
        return record

    def _write_record(self, record: Dict[str, Any]) -> None:
        self.progress.last_record = record
        if self.processes.is_main:
            with (self.out / METRICS).open("a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")

    def _save(self, record: Dict[str, Any]) -> None:
        """model-last, model-best when dev perplexity improved, then the checkpoint."""
        dev = record.get("dev_perplexity")
        improved = dev is not None and dev["mean"] < self.progress.best_perplexity
        if improved:
            self.progress.best_perplexity = dev["mean"]
        if self.processes.is_main:
            metrics = self.out / METRICS
            save_model_dir(self.lm, self.vocab, self.out / "model-last", config=self.settings.config, metrics=metrics)
            if improved:
                save_model_dir(
                    self.lm, self.vocab, self.out / "model-best", config=self.settings.config, metrics=metrics
                )
        self._save_checkpoint()

    def _checkpoint_due(self) -> bool:
        """training.checkpoint_minutes since the last checkpoint (on any process: all save together)."""
        minutes = self.settings.training.checkpoint_minutes
        due = minutes > 0 and time.monotonic() - self.checkpoint_time >= minutes * 60
        return self.processes.sum(torch.tensor(float(due))) > 0

    def _save_checkpoint(self) -> None:
        """Everything needed to resume exactly at this step, written atomically."""
        data_states = self.processes.gather(self.batcher.state_dict())
        lstm_states = self.processes.gather(
            None if self.state is None else LstmState(self.state.hidden.cpu(), self.state.cell.cpu())
        )
        rng_states = self.processes.gather(_rng_state())
        if self.processes.is_main:
            checkpoint = {
                "progress": vars(self.progress),
                "model": self.lm.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "sampler": self.sampler.generator.get_state(),
                "rng": rng_states,
                "world_size": self.processes.world_size,
                "data": data_states,
                "lstm_state": lstm_states,
                "config": self.settings.config.to_str(),
                "data_order": self.data_order,
            }
            tmp = self.checkpoint_path.with_name(f".{CHECKPOINT}.tmp")
            torch.save(checkpoint, tmp)
            os.replace(tmp, self.checkpoint_path)
        self.checkpoint_step = self.progress.step
        self.checkpoint_time = time.monotonic()
        self.processes.barrier()

    def _load_checkpoint(self) -> None:
        checkpoint = torch.load(self.checkpoint_path, map_location="cpu", weights_only=False)
        if checkpoint["world_size"] != self.processes.world_size:
            raise ValueError(
                f"{self.checkpoint_path} was written by {checkpoint['world_size']} process(es), this run has {self.processes.world_size}: "
                "resume with the same number of processes, or start afresh with --training.resume false."
            )
        try:
            self.lm.load_state_dict(checkpoint["model"])
        except RuntimeError as err:  # another model size or vocabulary
            first = next(
                (line.strip() for line in str(err).splitlines() if "size mismatch" in line or "Missing" in line),
                str(err),
            )
            raise ValueError(
                f"{self.checkpoint_path} is a run of another model or vocabulary than this config describes ({first[:200]}). "
                "Use a new output folder, or --training.resume false to start afresh in this one (its checkpoint and log are replaced)."
            ) from None
        saved_order, order = checkpoint.get("data_order"), self.data_order
        if saved_order is not None and saved_order != order:
            changes = "; ".join(
                f"{key} {saved_order.get(key)!r} -> {order.get(key)!r}"
                for key in sorted(set(saved_order) | set(order))
                if saved_order.get(key) != order.get(key)
            )
            raise ValueError(
                f"{self.checkpoint_path} was written for other training text or data settings ({changes}); resuming "
                "from its position would skip or repeat text. Resume with the text and settings it was written with, "
                "or use a new output folder, or --training.resume false to start afresh in this one."
            )
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        self.sampler.generator.set_state(checkpoint["sampler"])
        _set_rng_state(checkpoint["rng"][self.processes.rank])
        self.batcher.load_state_dict(checkpoint["data"][self.processes.rank])
        state = checkpoint["lstm_state"][self.processes.rank]
        self.state = (
            None
            if state is None
            else LstmState(state.hidden.to(self.processes.device), state.cell.to(self.processes.device))
        )
        self.progress = Progress(**checkpoint["progress"])
        # Tokens of a step interval cut short by a signal: this segment's first rate counts its own only.
        self.progress.tokens_since_log = 0
        self.checkpoint_step = self.progress.step
        if self.processes.is_main:
            _truncate_metrics(self.out / METRICS, self.progress.step)
        self._log(f"Resuming from {self.checkpoint_path} at step {self.progress.step}")

    def _data_order(self) -> Dict[str, Any]:
        """What decides the text each step reads: the checkpoint's position means the same
        only with the same files (by name and size) and data and tokenizer settings."""
        data = self.settings.data
        return {
            "paths.train": [f"{path.name} ({path.stat().st_size:,} bytes)" for path in self.train_lines.files],
            **{
                f"data.{key}": getattr(data, key)
                for key in ("mode", "batch_size", "unroll_steps", "max_line_bytes", "text_field", "interleave_files")
            },
            "data.segments_per_file": self.train_lines.segments,
            "tokenizer": json.dumps(self.settings.config.get("tokenizer", {}), sort_keys=True, default=str),
        }

    def _segment_start(self) -> Dict[str, Any]:
        """This process's run segment: where it started, on which machine and how loaded."""
        return {
            "start_step": self.progress.step,
            "start_tokens": self.progress.tokens,
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "threads": torch.get_num_threads(),
            "processes": self.processes.world_size,
            "cpus": os.cpu_count(),
            "load_average_at_start": _load_average(),
            "_wall": time.perf_counter(),
            "_cpu": time.process_time(),
        }

    def _segment_end(self, segment: Dict[str, Any], how: str) -> None:
        """Append the finished segment to OUTPUT_DIR/segments.jsonl (rank 0's figures)."""
        if not self.processes.is_main:
            return
        record = {k: v for k, v in segment.items() if not k.startswith("_")}
        record.update(
            end_step=self.progress.step,
            end_tokens=self.progress.tokens,
            ended_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            wall_seconds=round(time.perf_counter() - segment["_wall"], 1),
            cpu_seconds=round(time.process_time() - segment["_cpu"], 1),
            load_average_at_end=_load_average(),
            ended=how,
        )
        with (self.out / SEGMENTS).open("a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def _report_skipped(self, lines: TextLines) -> None:
        """Warn about unusable lines (counts since the start of this process)."""
        message = lines.describe_skipped()
        if message:
            self._log(f"Warning: {message}")

    def _log(self, message: str) -> None:
        if self.processes.is_main:
            print(message, file=sys.stderr, flush=True)


def bf16_matmuls(mixed_precision: Union[bool, str], device: torch.device) -> Optional[torch.dtype]:
    """torch.bfloat16 where system.mixed_precision asks for bf16 matmuls and the device runs
    them fast (a CUDA GPU with bf16, a CPU with AMX or avx512_bf16), else None."""
    if mixed_precision is False:
        return None
    if device.type == "cuda":
        supported, hardware = torch.cuda.is_bf16_supported(), "this GPU"
    else:
        supported = any(
            getattr(torch.cpu, check, lambda: False)()
            for check in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
        )
        hardware = "this CPU (it has neither AMX nor avx512_bf16)"
    if mixed_precision is True and not supported:
        raise ValueError(
            f"system.mixed_precision = true asks for bf16 matmuls, which {hardware} cannot run fast. "
            'Set --system.mixed_precision false (fp32) or "auto" (bf16 only where supported).'
        )
    return torch.bfloat16 if supported else None


class TrainingStopped(Exception):
    """SIGINT or SIGTERM stopped training after a step; its checkpoint was written."""

    def __init__(self, step: int, signal_number: int):
        super().__init__(f"stopped at step {step}; checkpoint kept; rerun the same command to resume")
        self.step = step
        self.exit_code = 128 + signal_number


class StopSignals:
    """While active, the first SIGINT or SIGTERM only sets ``received`` (training stops
    after the current step, with a checkpoint); a second one exits at once."""

    def __init__(self) -> None:
        self.received = False
        self.name = ""
        self.number = 0
        self._previous: Dict[int, Any] = {}

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, sig: int, frame) -> None:
        if self.received:
            print(
                f"\n{signal.Signals(sig).name} again: exiting now, without a checkpoint of this step.",
                file=sys.stderr,
                flush=True,
            )
            os._exit(130 if sig == signal.SIGINT else 143)
        self.received, self.name, self.number = True, signal.Signals(sig).name, sig
        print(
            f"\n{self.name}: stopping after this step and writing a checkpoint (send it again to exit at once).",
            file=sys.stderr,
            flush=True,
        )


def _load_average() -> Optional[float]:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def _seed(seed: int) -> None:
    random.seed(seed)
    numpy.random.seed(seed)
    torch.manual_seed(seed)


def _rng_state() -> Dict[str, Any]:
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    }


def _set_rng_state(state: Dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    if state["cuda"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _truncate_metrics(path: Path, step: int) -> None:
    """Drop records logged after the checkpoint, so a resumed run continues one log."""
    if not path.exists():
        return
    kept = [line for line in path.read_text(encoding="utf-8").splitlines() if line and json.loads(line)["step"] <= step]
    path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
