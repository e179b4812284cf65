"""Pretraining input: text files, their problems, sentences, vocabulary and batches."""

import gzip
import json
from collections import Counter
from pathlib import Path

import numpy
import pytest
import spacy

from spacy_elmo.chars import CharacterIds
from spacy_elmo.pretrain.batches import RowStreams, WindowBatcher, make_batch, sentence_windows
from spacy_elmo.pretrain.corpus import CorpusError, TextLines
from spacy_elmo.pretrain.sentences import spacy_sentences, whitespace_sentences
from spacy_elmo.pretrain.vocab import Vocabulary


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def test_lines_from_txt_gz_and_jsonl_gz_are_numbered_across_files(tmp_path):
    a = write(tmp_path / "a.txt.gz", b"first paragraph\n\nsecond one\n")
    b = write(tmp_path / "b.jsonl.gz", json.dumps({"text": "from json"}).encode() + b"\n" + b'{"id": 3}\n')
    lines = TextLines([a, b])
    assert list(lines) == [(0, "first paragraph"), (2, "second one"), (3, "from json")]
    assert lines.skipped == Counter({'no string "text" field': 1})
    assert list(lines.read(start=3)) == [(3, "from json")]


def test_interleaved_files_are_mixed_in_proportion_to_their_lines(tmp_path):
    a = write(tmp_path / "a.txt", b"a1\na2\n")
    b = write(tmp_path / "b.txt.gz", b"b1\nb2\nb3\nb4\nb5\nb6")  # no final newline
    lines = TextLines([a, b], interleave=True)
    assert lines.line_counts() == [2, 6]
    order = ["b1", "a1", "b2", "b3", "b4", "a2", "b5", "b6"]  # a's lines at 1/4 and 3/4 of the pass
    assert list(lines) == list(enumerate(order))
    assert list(lines.read(start=5)) == [(5, "a2"), (6, "b5"), (7, "b6")]


def test_file_segments_mix_a_file_sorted_by_source(tmp_path):
    sorted_by_source = write(tmp_path / "news.txt", "".join(f"{s}{i}\n" for s in "abcd" for i in (1, 2)).encode())
    lines = TextLines(sorted_by_source, interleave=True, segments=4)
    order = ["a1", "b1", "c1", "d1", "a2", "b2", "c2", "d2"]  # every source in each half of the pass
    assert list(lines) == list(enumerate(order))
    assert list(lines.read(start=5)) == [(5, "b2"), (6, "c2"), (7, "d2")]
    # More segments than lines: every line once; without interleave, segments change nothing.
    short = write(tmp_path / "short.txt", b"x\ny\nz\n")
    assert [t for _, t in TextLines(short, interleave=True, segments=16)] == ["x", "y", "z"]
    assert [t for _, t in TextLines(sorted_by_source, segments=4)] == [f"{s}{i}" for s in "abcd" for i in (1, 2)]
    with pytest.raises(ValueError, match="segments must be at least 1"):
        TextLines(short, interleave=True, segments=0)


def test_parts_read_at_once_raise_the_open_file_limit_or_name_the_setting(tmp_path, monkeypatch):
    """Each file's segments are open together: the soft limit rises to fit them, up to the hard one."""
    resource = pytest.importorskip("resource")
    files = [write(tmp_path / f"{name}.txt", f"{name}1\n{name}2\n{name}3\n".encode()) for name in "abc"]
    lines = TextLines(files, interleave=True, segments=3)  # 9 parts
    raised = []
    monkeypatch.setattr(resource, "setrlimit", lambda which, limits: raised.append(limits))
    monkeypatch.setattr(resource, "getrlimit", lambda which: (200, 1000))
    assert sorted(t for _, t in lines) == sorted(f"{n}{i}" for n in "abc" for i in (1, 2, 3))
    assert raised == [(9 + 256, 1000)]
    monkeypatch.setattr(resource, "getrlimit", lambda which: (200, 260))
    with pytest.raises(
        CorpusError,
        match=r"3 text file\(s\) in 9 parts at once needs 265 open files.*\(260\): lower data.segments_per_file",
    ):
        list(lines)


def test_bad_lines_are_skipped_and_counted(tmp_path):
    text = "good line\n".encode() + b"caf\xe9 latin-1\n" + b"x" * 5000 + b"\nlast line\n"
    lines = TextLines(write(tmp_path / "t.txt", text), max_line_bytes=1000)
    assert [t for _, t in lines] == ["good line", "last line"]
    assert lines.skipped == Counter({"not UTF-8": 1, "longer than max_line_bytes": 1})
    assert "2 line(s) skipped" in lines.describe_skipped()


@pytest.mark.parametrize(
    "name,data,message",
    [
        ("empty.txt", b"", "is empty"),
        ("model.bin", b"\x00\x01binary\x00", "looks binary"),
        ("fake.txt.gz", b"not gzip at all", "Cannot read text file"),
    ],
)
def test_unreadable_files_name_the_file_and_the_problem(tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(CorpusError, match=message) as err:
        list(TextLines(path))
    assert name in str(err.value)


def test_missing_path_and_textless_folder(tmp_path):
    with pytest.raises(CorpusError, match="not found: .*nope.txt"):
        TextLines(tmp_path / "nope.txt")
    with pytest.raises(CorpusError, match="holds no text files"):
        TextLines(tmp_path)


def test_text_with_no_usable_line_stops_instead_of_looping(tmp_path):
    path = write(tmp_path / "t.txt", b"\xff\xfe\n\xff\n")
    streams = RowStreams(TextLines(path), whitespace_sentences(), rows=range(0, 2), n_rows=2)
    with pytest.raises(CorpusError, match="No usable text.*2 not UTF-8"):
        streams.next_sentence(0)


def test_spacy_sentences_tokenize_and_split():
    split = spacy_sentences("en")
    (sentences,) = split(["Dr. Smith arrived. He didn't stay!  "])
    assert sentences == [["Dr.", "Smith", "arrived", "."], ["He", "did", "n't", "stay", "!"]]


def test_spacy_sentences_use_the_pipeline_tokenizer(tmp_path):
    nlp = spacy.blank("en")
    nlp.tokenizer.add_special_case("spacyelmo", [{"ORTH": "spacy"}, {"ORTH": "elmo"}])
    nlp.to_disk(tmp_path / "pipeline")
    (sentences,) = spacy_sentences(model=str(tmp_path / "pipeline"))(["We use spacyelmo here. Yes."])
    assert sentences == [["We", "use", "spacy", "elmo", "here", "."], ["Yes", "."]]
    (blank,) = spacy_sentences("en")(["We use spacyelmo here."])
    assert blank[0][2] == "spacyelmo"


def test_vocabulary_top_n_min_count_and_round_trip(tmp_path):
    vocab = Vocabulary.build([["a", "b", "a", "c"], ["a", "b", "d"]], max_size=2, min_count=2)
    assert vocab.words == ["<S>", "</S>", "<UNK>", "a", "b"]
    assert vocab.id("c") == vocab.unk_id == 2
    vocab.to_disk(tmp_path / "vocab.txt")
    assert Vocabulary.from_disk(tmp_path / "vocab.txt").words == vocab.words
    (tmp_path / "bad.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match="bad.txt.*<S>, </S>, <UNK> missing"):
        Vocabulary.from_disk(tmp_path / "bad.txt")


def test_rows_receive_lines_round_robin_whatever_the_process_split(tmp_path):
    path = write(tmp_path / "t.txt", "".join(f"w{i} x{i}\n" for i in range(7)).encode())
    split = whitespace_sentences()
    whole = RowStreams(TextLines(path), split, rows=range(0, 4), n_rows=4)
    first, second = (RowStreams(TextLines(path), split, rows=r, n_rows=4) for r in (range(0, 2), range(2, 4)))
    for row in range(4):
        part = first if row < 2 else second
        got = [whole.next_sentence(row) for _ in range(5)]
        assert got == [part.next_sentence(row) for _ in range(5)]
        # Line g of the endless stream (text repeated) goes to row g % 4.
        assert got[:2] == [[f"w{g % 7}", f"x{g % 7}"] for g in (row, row + 4)]


def test_stream_windows_follow_sentences_and_carry_over(tmp_path):
    path = write(tmp_path / "t.txt", b"a b c\nd e\n")
    vocab = Vocabulary.build([["a", "b", "c", "d", "e"]], max_size=10)
    streams = RowStreams(TextLines(path), whitespace_sentences(), rows=range(0, 1), n_rows=1)
    batcher = WindowBatcher(streams, vocab, CharacterIds(), unroll_steps=4, mode="stream")
    first, second = batcher.next_batch(), batcher.next_batch()
    words = vocab.words
    # Forward stream: <S> a b c </S> <S> d e </S> ...; backward: </S> c b a <S> </S> e d <S> ...
    assert [words[i] for i in first.targets[0, 0]] == ["a", "b", "c", "</S>"]
    assert [words[i] for i in second.targets[0, 0]] == ["<S>", "d", "e", "</S>"]
    assert [words[i] for i in first.targets[1, 0]] == ["c", "b", "a", "<S>"]
    assert [words[i] for i in second.targets[1, 0]] == ["</S>", "e", "d", "<S>"]
    assert first.mask.all() and first.n_targets == 4
    # Inputs are the targets shifted by one: the first window's last target is the next window's first input.
    chars = CharacterIds()
    assert numpy.array_equal(first.token_chars[first.token_index[0, 0, 0]], chars.bos)
    assert numpy.array_equal(second.token_chars[second.token_index[0, 0, 0]], chars.eos)


def test_sentence_mode_pads_one_sentence_per_row(tmp_path):
    vocab = Vocabulary.build([["a", "b", "c"]], max_size=10)
    windows = [next(sentence_windows(["a", "b", "c"], 10)), next(sentence_windows(["a"], 10))]
    batch = make_batch(windows, vocab, CharacterIds())
    assert batch.mask.tolist() == [[True] * 4, [True, True, False, False]]
    assert batch.n_targets == 6
    assert batch.token_index[:, 1, 2:].eq(0).all()  # padding points at the zero row
    assert not batch.token_chars[0].any()
    long_windows = list(sentence_windows(list("abcdefg"), 3))
    assert [len(f) for f, _ in long_windows] == [4, 4, 3]  # 8 targets: 7 words and </S>


def test_sentence_mode_cuts_long_sentences_and_starts_each_sentence_afresh(tmp_path):
    path = write(tmp_path / "t.txt", b"a b c d e\nf\n")
    vocab = Vocabulary.build([["a", "b", "c", "d", "e", "f"]], max_size=10)
    streams = RowStreams(TextLines(path), whitespace_sentences(), rows=range(0, 1), n_rows=1)
    batcher = WindowBatcher(streams, vocab, CharacterIds(), unroll_steps=3, mode="sentences")
    assert not batcher.stateful
    words = vocab.words
    got = [batcher.next_batch() for _ in range(3)]
    assert [[words[i] for i in b.targets[0, 0]] for b in got] == [["a", "b", "c"], ["d", "e", "</S>"], ["f", "</S>"]]
    assert [[words[i] for i in b.targets[1, 0]] for b in got] == [["e", "d", "c"], ["b", "a", "<S>"], ["f", "<S>"]]
