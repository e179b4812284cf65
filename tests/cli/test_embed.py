"""`python -m spacy_elmo embed`: allennlp elmo's HDF5 layout, the same vectors as the elmo
component, every output and input form, errors with their line numbers, no partial files."""

import json
from itertools import count, islice

import h5py
import numpy
import pytest
import spacy
import torch
from spacy.tokens import Doc, DocBin
from typer.testing import CliRunner

import spacy_elmo.embed as embed_module
from spacy_elmo.cli import app
from spacy_elmo.embed import layer_features
from spacy_elmo.formats import load_bilm_dir
from spacy_elmo.model import FastBiLM

SENTENCES = [
    "The cat sat on the mat .",
    "A",
    "Peter Blackburn , the European Commission 's spokesman , said on Thursday it disagreed with the German advice .",
    "The cat sat on the mat .",  # repeated: sentence_to_index maps it to its last index
    "caf\u00e9 cr\u00e8me br\u00fbl\u00e9e",
    *[" ".join(f"w{i}" for i in range(n)) for n in range(2, 14)],
]


def invoke(*args, input=None):
    return CliRunner().invoke(app, ["embed", *map(str, args), "--no-progress"], input=input)


def read(path):
    with h5py.File(path, "r") as f:
        mapping = json.loads(f["sentence_to_index"][0]) if "sentence_to_index" in f else None
        arrays = {key: f[key][...] for key in f if key != "sentence_to_index"}
        dtypes = {f[key].dtype for key in arrays}
    return arrays, mapping, dtypes


def component(bilm_dir):
    nlp = spacy.blank("en")
    model = {"options_file": str(bilm_dir / "options.json"), "weight_file": str(bilm_dir / "weights.hdf5")}
    nlp.add_pipe("elmo", config={"model": model})
    nlp.initialize()
    return nlp


@pytest.fixture(scope="module")
def sentences_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("embed") / "sentences.txt"
    path.write_text("".join(s + "\n" for s in SENTENCES), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def all_layers(tiny_bilm_dir, sentences_file, tmp_path_factory):
    output = tmp_path_factory.mktemp("embed_all") / "all.hdf5"
    result = invoke(sentences_file, output, tiny_bilm_dir)
    assert result.exit_code == 0, result.output
    assert f"Wrote {len(SENTENCES)} sentences" in result.output
    return read(output)


def test_all_layers_equal_the_component_for_every_sentence(tiny_bilm_dir, all_layers):
    arrays, mapping, dtypes = all_layers
    assert sorted(arrays, key=int) == [str(i) for i in range(len(SENTENCES))] and dtypes == {numpy.dtype("float32")}
    assert mapping == {s: str(i) for i, s in enumerate(SENTENCES) if s != SENTENCES[0]} | {SENTENCES[0]: "3"}
    nlp = component(tiny_bilm_dir)
    docs = list(nlp.pipe(Doc(nlp.vocab, words=s.split()) for s in SENTENCES))  # one sentence per Doc
    for i, doc in enumerate(docs):
        assert arrays[str(i)].shape == (3, len(doc), 32)
        numpy.testing.assert_allclose(arrays[str(i)], doc._.elmo_layers, atol=1e-6, rtol=0)


def test_top_average_and_mix(tiny_bilm_dir, sentences_file, all_layers, tmp_path):
    layers = all_layers[0]
    runs = {
        "top": (["--top"], lambda x: x[-1]),
        "average": (["--average"], lambda x: x.mean(axis=0)),
        # Weights are used as given, not softmax-normalised: 1,1,1 is the sum of the layers.
        "sum": (["--mix", "1,1,1"], lambda x: x.sum(axis=0)),
        "mix": (["--mix", "0.2,-0.3,0.5", "--gamma", "2"], lambda x: 2 * (0.2 * x[0] - 0.3 * x[1] + 0.5 * x[2])),
    }
    for name, (options, expected) in runs.items():
        result = invoke(sentences_file, tmp_path / f"{name}.hdf5", "--bilm", tiny_bilm_dir, *options)
        assert result.exit_code == 0, result.output
        arrays, _, dtypes = read(tmp_path / f"{name}.hdf5")
        assert dtypes == {numpy.dtype("float32")}
        for key, value in layers.items():
            assert arrays[key].shape == value.shape[1:]
            numpy.testing.assert_allclose(arrays[key], expected(value), atol=1e-6, rtol=0, err_msg=name)


def test_options_and_weights_and_stdin(tiny_bilm_dir, sentences_file, all_layers, tmp_path):
    files = ["--options", tiny_bilm_dir / "options.json", "--weights", tiny_bilm_dir / "weights.hdf5"]
    result = invoke("-", tmp_path / "stdin.hdf5", *files, input=sentences_file.read_bytes())
    assert result.exit_code == 0, result.output
    arrays, mapping, _ = read(tmp_path / "stdin.hdf5")
    assert mapping == all_layers[1] and arrays.keys() == all_layers[0].keys()
    for key, value in all_layers[0].items():
        numpy.testing.assert_array_equal(arrays[key], value)


def test_docbin_sentences_and_docs(tiny_bilm_dir, tmp_path):
    nlp = component(tiny_bilm_dir)
    docs = [
        Doc(
            nlp.vocab,
            words=["EU", "rejects", "it", ".", "Peter", "agrees", "."],
            sent_starts=[True, False, False, False, True, False, False],
        ),
        Doc(nlp.vocab, words=["No", "sentence", "boundaries", "here"]),
        Doc(nlp.vocab, words=["a", "\n\n", "b", "c"]),  # a whitespace token: a zero row, as in doc._.elmo_layers
        Doc(nlp.vocab, words=[]),  # no sentence
    ]
    DocBin(docs=docs).to_disk(tmp_path / "docs.spacy")
    result = invoke(tmp_path / "docs.spacy", tmp_path / "docs.hdf5", tiny_bilm_dir)
    assert result.exit_code == 0, result.output
    arrays, mapping, _ = read(tmp_path / "docs.hdf5")
    expected = [docs[0][0:4], docs[0][4:7], docs[1][:], docs[2][:]]
    assert mapping == {span.text: str(i) for i, span in enumerate(expected)}
    annotated = list(nlp.pipe(docs))
    for i, span in enumerate(expected):
        doc = annotated[docs.index(span.doc)]
        numpy.testing.assert_allclose(arrays[str(i)], doc._.elmo_layers[:, span.start : span.end], atol=1e-6, rtol=0)
    assert not arrays["3"][:, 1].any() and arrays["3"][:, 0].any()


def test_tokenize_splits_raw_text_into_sentences(tiny_bilm_dir, tmp_path):
    (tmp_path / "raw.txt").write_text("Hello world. This is raw text!\n\nSecond  paragraph, here.\n", encoding="utf-8")
    result = invoke(tmp_path / "raw.txt", tmp_path / "raw.hdf5", tiny_bilm_dir, "--tokenize")
    assert result.exit_code == 0, result.output
    arrays, mapping, _ = read(tmp_path / "raw.hdf5")
    tokenized = ["Hello world .", "This is raw text !", "Second paragraph , here ."]
    assert mapping == {s: str(i) for i, s in enumerate(tokenized)}
    (tmp_path / "tokenized.txt").write_text("\n".join(tokenized) + "\n")
    assert invoke(tmp_path / "tokenized.txt", tmp_path / "tokenized.hdf5", tiny_bilm_dir).exit_code == 0
    for key, value in read(tmp_path / "tokenized.hdf5")[0].items():
        numpy.testing.assert_array_equal(arrays[key], value)


@pytest.mark.parametrize(
    "content,message",
    [
        (b"one sentence\n\nthe third line\n", "line 2 is empty"),
        (b"one sentence\n   \t\n", "line 2 is empty"),
        (b"one\ntwo\ncaf\xe9 latin-1\n", "line 3 is not UTF-8 (byte 0xe9 at column 4)"),
    ],
)
def test_bad_lines_name_their_number_and_leave_no_file(tiny_bilm_dir, tmp_path, content, message):
    (tmp_path / "in.txt").write_bytes(content)
    result = invoke(tmp_path / "in.txt", tmp_path / "out.hdf5", tiny_bilm_dir)
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == [tmp_path / "in.txt"]


def test_model_and_option_errors(tiny_bilm_dir, sentences_file, tmp_path):
    cases = [
        ([tmp_path / "missing"], 1, "biLM folder not found"),
        (["--bilm", sentences_file.parent], 1, "is not a biLM folder: it has no options.json"),
        (
            ["--options", tiny_bilm_dir / "options.json", "--weights", tmp_path / "none.hdf5"],
            1,
            "ELMo weight file not found",
        ),
        ([], 2, "No biLM: pass a folder"),
        ([tiny_bilm_dir, "--options", tiny_bilm_dir / "options.json"], 2, "not both"),
        ([tiny_bilm_dir, "--top", "--average"], 2, "Choose one output"),
        ([tiny_bilm_dir, "--mix", "0.5,0.5"], 2, "--mix has 2 weight(s) but the biLM has 3 layers"),
        ([tiny_bilm_dir, "--mix", "a,b,c"], 2, "--mix takes comma-separated numbers"),
        ([tiny_bilm_dir, "--gamma", "2"], 2, "--gamma scales a --mix"),
    ]
    for args, code, message in cases:
        result = invoke(sentences_file, tmp_path / "out.hdf5", *args)
        assert (result.exit_code, message in result.output) == (code, True), (args, result.output)
    assert not (tmp_path / "out.hdf5").exists()
    result = invoke(tmp_path / "absent.txt", tmp_path / "out.hdf5", tiny_bilm_dir)
    assert result.exit_code == 1 and "Input not found" in result.output
    result = invoke(sentences_file, tmp_path / "out.hdf5", tiny_bilm_dir, "--tokenize", "--lang", "english")
    assert result.exit_code == 2 and "--lang 'english' is not a language code" in result.output, result.output
    result = invoke(sentences_file, tmp_path, tiny_bilm_dir)  # refused before any work
    assert result.exit_code == 2 and f"OUTPUT {tmp_path} is a folder" in result.output, result.output


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_gpu_id_without_cuda_is_a_clear_error(tiny_bilm_dir, sentences_file, tmp_path):
    result = invoke(sentences_file, tmp_path / "out.hdf5", tiny_bilm_dir, "--gpu-id", "0")
    assert result.exit_code == 1 and "--gpu-id 0 asks for a GPU" in result.output and "--gpu-id -1" in result.output
    assert not (tmp_path / "out.hdf5").exists()


def test_a_failure_midway_leaves_the_previous_output(tiny_bilm_dir, sentences_file, tmp_path, monkeypatch):
    output = tmp_path / "out.hdf5"
    output.write_bytes(b"the previous run's file")
    select, calls = embed_module.select_output, count()

    def fail_on_the_fifth(*args, **kwargs):
        if next(calls) == 4:
            raise OSError("disk full")
        return select(*args, **kwargs)

    monkeypatch.setattr(embed_module, "select_output", fail_on_the_fifth)
    result = invoke(sentences_file, output, tiny_bilm_dir)
    assert result.exit_code == 1 and "disk full" in result.output
    assert output.read_bytes() == b"the previous run's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.hdf5"]  # no temporary file left


def test_layer_features_stream_their_input(tiny_bilm_dir):
    """Results come after one chunk of the input is read, not the whole of it."""
    bilm = FastBiLM(load_bilm_dir(tiny_bilm_dir).eval())
    read = []

    def long_input():
        for i in range(100_000):
            read.append(i)
            if i == 1000:
                raise AssertionError("read far past the first chunk")
            yield ["word"] * (1 + i % 7)

    first = list(islice(layer_features(bilm, long_input(), max_batch_tokens=16, chunk_tokens=40), 5))
    assert len(read) <= 12  # a chunk of about 40 words
    assert sorted(index for index, _ in first) == sorted({index for index, _ in first})
    for index, layers in first:
        assert layers.shape == (3, 1 + index % 7, 32) and layers.dtype == numpy.float32
