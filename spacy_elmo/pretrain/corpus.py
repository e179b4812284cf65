"""Raw training text, streamed line by line: .txt, .txt.gz, .jsonl and .jsonl.gz.

Each line is one paragraph (in .jsonl, the "text" field of one object). Lines that cannot be
used (not UTF-8, longer than ``max_line_bytes``, bad JSON) are skipped and counted, never
loaded whole: an over-long line is read and discarded in chunks.
"""

import gzip
import heapq
import io
import json
import sys
from collections import Counter
from contextlib import ExitStack
from itertools import chain, islice
from pathlib import Path
from typing import IO, Iterator, List, Optional, Sequence, Tuple, Union

PathLike = Union[str, Path]
TEXT_SUFFIXES = (".txt", ".txt.gz", ".jsonl", ".jsonl.gz", ".tokens")
_CHUNK = 1 << 16


class CorpusError(ValueError):
    """Training or evaluation text that cannot be read."""


def find_text_files(paths: Union[PathLike, Sequence[PathLike]]) -> List[Path]:
    """The text files named by a path, a folder (its text files, sorted) or a list of them."""
    if isinstance(paths, (str, Path)):
        paths = [p for p in str(paths).split(",") if p]
    files: List[Path] = []
    for entry in paths:
        path = Path(entry)
        if not path.exists():
            raise CorpusError(
                f"Text path not found: {path}. Pass an existing file or folder (paths.train / paths.dev)."
            )
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(TEXT_SUFFIXES))
            if not found:
                raise CorpusError(
                    f"Folder {path} holds no text files; expected names ending in {', '.join(TEXT_SUFFIXES)}."
                )
            files.extend(found)
        else:
            files.append(path)
    if not files:
        raise CorpusError("No text files given; pass paths.train (and paths.dev) on the command line or in the config.")
    return files


class TextLines:
    """Iterate the usable lines of some text files, numbered across files.

    With ``interleave`` the files are mixed in proportion to their lines, each file's lines
    spread evenly over the pass (so a training stream over corpora of different sizes is the
    same mixture from start to end); otherwise one file after the other. ``segments`` (with
    ``interleave``) reads each file as that many contiguous parts mixed the same way, so that a
    file sorted by source or date (one news agency after another) is also the same mixture
    from start to end rather than one part after another.
    ``skipped`` counts the lines left out by reason in the first complete pass (training
    reads the text again and again); blank lines are numbered but not counted as skipped.
    ``start`` skips that many lines (used to resume) without decoding them.
    """

    def __init__(
        self,
        paths: Union[PathLike, Sequence[PathLike]],
        *,
        max_line_bytes: int = 1_000_000,
        text_field: str = "text",
        interleave: bool = False,
        segments: int = 1,
    ):
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be positive, got {max_line_bytes}.")
        if segments < 1:
            raise ValueError(f"segments must be at least 1, got {segments}.")
        self.files = find_text_files(paths)
        self.max_line_bytes = max_line_bytes
        self.text_field = text_field
        self.interleave = interleave
        self.segments = segments if interleave else 1
        self.skipped: Counter = Counter()
        self._counted_a_pass = False
        self._line_counts: Optional[List[int]] = None

    def __iter__(self) -> Iterator[Tuple[int, str]]:
        return self.read()

    def read(self, start: int = 0) -> Iterator[Tuple[int, str]]:
        skipped = self.skipped if start == 0 and not self._counted_a_pass else Counter()
        with ExitStack() as files:

            def raw_lines(path: Path) -> Iterator[Tuple[bytes, bool]]:
                is_json = path.name.endswith((".jsonl", ".jsonl.gz"))
                return _raw_lines(files.enter_context(_open(path)), self.max_line_bytes, path, is_json)

            if self.interleave:
                bounds = []  # each part's file, first line, end (None: the file's end) and size; all read at once
                for path, n in zip(self.files, self.line_counts()):
                    starts = sorted({n * k // self.segments for k in range(self.segments)})  # no empty parts
                    ends: List[Optional[int]] = [*starts[1:], None]  # the last part runs to the file's end
                    bounds.extend(
                        (path, begin, end, (n if end is None else end) - begin) for begin, end in zip(starts, ends)
                    )
                _allow_open_files(len(bounds), len(self.files))
                parts = [islice(raw_lines(path), begin, end) for path, begin, end, _ in bounds]
                lines = _proportional(parts, [size for *_, size in bounds])
            else:
                lines = chain.from_iterable(raw_lines(path) for path in self.files)
            for index, (raw, is_json) in enumerate(lines):
                if index < start:
                    continue
                text = self._decode(raw, is_json, skipped)
                if text:
                    yield index, text
        if skipped is self.skipped:
            self._counted_a_pass = True

    def line_counts(self) -> List[int]:
        """Lines in each file (counted once, on first use)."""
        if self._line_counts is None:
            self._line_counts = [_count_lines(path) for path in self.files]
        return self._line_counts

    def _decode(self, raw: bytes, is_json: bool, skipped: Counter) -> str:
        if raw is _TOO_LONG:
            skipped["longer than max_line_bytes"] += 1
            return ""
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            skipped["not UTF-8"] += 1
            return ""
        if not is_json or not line:
            return line
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            skipped["not valid JSON"] += 1
            return ""
        text = record.get(self.text_field) if isinstance(record, dict) else None
        if not isinstance(text, str):
            skipped[f'no string "{self.text_field}" field'] += 1
            return ""
        return text.strip()

    def describe_skipped(self) -> str:
        """e.g. '3 lines skipped (2 not UTF-8, 1 longer than max_line_bytes)', or ''."""
        total = sum(self.skipped.values())
        if not total:
            return ""
        reasons = ", ".join(f"{n} {why}" for why, n in self.skipped.most_common())
        return f"{total} line(s) skipped in {', '.join(map(str, self.files))} ({reasons})"


_TOO_LONG = b"\x00too long\x00"


def _open(path: Path) -> IO[bytes]:
    if path.is_dir():
        raise CorpusError(f"Text path {path} is a folder inside a file list; pass the folder itself or its files.")
    try:
        f: IO[bytes] = gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")
        head = f.peek(_CHUNK)[:_CHUNK] if hasattr(f, "peek") else b""
    except (OSError, EOFError) as err:
        raise CorpusError(f"Cannot read text file {path} ({err}); is the .gz file complete and really gzip?") from None
    if not head:
        f.close()
        raise CorpusError(f"Text file {path} is empty; remove it from the input or give it one paragraph per line.")
    if b"\x00" in head:
        f.close()
        raise CorpusError(
            f"Text file {path} looks binary (it contains NUL bytes); expected UTF-8 text with one paragraph per line, "
            'or .jsonl with a "text" field (gzipped files need a .gz suffix).'
        )
    return f


def _allow_open_files(n_parts: int, n_files: int) -> None:
    """Raise this process's soft limit on open files to fit ``n_parts`` read at once (up to
    the hard limit), or say how to need fewer."""
    if sys.platform == "win32":
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = n_parts + 256  # the process's own files: libraries, sockets, checkpoints
    if soft == resource.RLIM_INFINITY or needed <= soft:
        return
    if hard != resource.RLIM_INFINITY and needed > hard:
        raise CorpusError(
            f"Reading {n_files} text file(s) in {n_parts} parts at once needs {needed} open files, more than this "
            f"process may open ({hard}): lower data.segments_per_file, join the text into fewer files, or raise "
            "the limit (ulimit -n)."
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def _raw_lines(f: IO[bytes], max_bytes: int, path: Path, is_json: bool) -> Iterator[Tuple[bytes, bool]]:
    """(bytes, is_json) of each line; bytes is _TOO_LONG for a line over max_bytes (read and
    dropped in chunks)."""
    try:
        while True:
            line = f.readline(max_bytes + 1)
            if not line:
                return
            if len(line) > max_bytes and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):
                    line = f.readline(_CHUNK)
                yield _TOO_LONG, is_json
            else:
                yield line, is_json
    except (OSError, EOFError, io.UnsupportedOperation) as err:
        raise CorpusError(f"Reading text file {path} failed ({err}); the file may be truncated or corrupt.") from None


def _count_lines(path: Path) -> int:
    with _open(path) as f:
        count, last = 0, b"\n"
        while chunk := f.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
        return count + (last != b"\n")


def _proportional(iterators: List[Iterator], counts: List[int]) -> Iterator:
    """The items of all iterators, the next one always from the iterator that has given the
    smallest share of its ``counts`` items (its k-th item sits at (k + 0.5) / count; ties go
    to the earlier iterator). An iterator longer than its count finishes after the others."""
    heap = [(0.5 / max(n, 1), i, 0) for i, n in enumerate(counts)]
    heapq.heapify(heap)
    while heap:
        _, i, k = heapq.heappop(heap)
        item = next(iterators[i], None)
        if item is not None:
            heapq.heappush(heap, ((k + 1.5) / max(counts[i], 1), i, k + 1))
            yield item
