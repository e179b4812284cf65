"""The project's data scripts: WNUT-17, SST/TREC conversion, disjoint subsampling, the report table."""

import json

import pytest
import spacy
from project_scripts import load_script
from spacy.tokens import Doc, DocBin
from typer.testing import CliRunner


def test_sst_trees_give_words_and_root_labels(tmp_path):
    convert = load_script("convert_textcat")
    trees = tmp_path / "t.txt"
    trees.write_text("(3 (2 (2 The) (2 Rock)) (4 (2 -LRB-) (4 rules)))\n(2 (2 Meh) (2 .))\n(0 (0 Awful))\n")
    assert list(convert.read_sst(trees, binary=False)) == [
        (["The", "Rock", "(", "rules"], "positive"),
        (["Meh", "."], "neutral"),
        (["Awful"], "very_negative"),
    ]
    assert [label for _, label in convert.read_sst(trees, binary=True)] == ["positive", "negative"]
    trees.write_text("not a tree\n")
    with pytest.raises(ValueError, match="t.txt:1: expected a PTB tree"):
        list(convert.read_sst(trees, binary=False))


def test_trec_lines_and_docbin_cats(tmp_path):
    convert = load_script("convert_textcat")
    trec = tmp_path / "trec.txt"
    trec.write_bytes("3 Who wrote Hamlet ?\n5 How many caf\xe9s are there ?\n".encode("latin-1"))
    examples = list(convert.read_trec(trec))
    assert examples[1] == (["How", "many", "cafés", "are", "there", "?"], "NUM")
    docs = list(convert.to_docbin(iter(examples), convert.TREC_LABELS).get_docs(spacy.blank("en").vocab))
    assert docs[0].cats["HUM"] == 1.0 and sum(docs[0].cats.values()) == 1.0
    trec.write_text("9 bad label\n")
    with pytest.raises(ValueError, match="LABEL in 0..5"):
        list(convert.read_trec(trec))


def test_wnut17_sentences_end_at_blank_and_tab_only_lines(tmp_path):
    convert = load_script("convert_conll")
    path = tmp_path / "wnut.conll"
    path.write_text("@user\tO\nNew\tB-location\nYork\tI-location\n\t\nok\tO\n\nThe\tO\nXbox\tB-product\n")
    assert list(convert.read_wnut17(path)) == [
        (["@user", "New", "York"], ["O", "B-location", "I-location"]),
        (["ok"], ["O"]),
        (["The", "Xbox"], ["O", "B-product"]),
    ]
    docs = list(convert.conll_to_docbin(path, format="wnut17").get_docs(spacy.blank("en").vocab))
    assert [(e.text, e.label_) for e in docs[0].ents] == [("New York", "location")]
    path.write_text("word B-person\n")
    with pytest.raises(ValueError, match="wnut.conll:1: expected TOKEN<TAB>TAG"):
        list(convert.read_wnut17(path))


def test_subsample_with_rest_is_a_disjoint_split(tmp_path):
    subsample = load_script("subsample")
    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=[f"doc{i}"]) for i in range(50)]).to_disk(tmp_path / "all.spacy")
    result = CliRunner().invoke(
        _cli(subsample.main),
        [
            str(tmp_path / "all.spacy"),
            str(tmp_path / "dev.spacy"),
            "--fraction",
            "0.2",
            "--rest",
            str(tmp_path / "train.spacy"),
        ],
    )
    assert result.exit_code == 0, result.output
    read = lambda p: [d[0].text for d in DocBin().from_disk(p).get_docs(vocab)]  # noqa: E731
    dev, train = read(tmp_path / "dev.spacy"), read(tmp_path / "train.spacy")
    assert len(dev) == 10 and len(train) == 40
    assert sorted(dev + train) == sorted(f"doc{i}" for i in range(50))


def test_run_records_name_the_first_cpu_and_its_bf16_support(tmp_path):
    host = load_script("run_experiment").host
    block = "processor\t: {n}\ncpu family\t: 6\nmodel\t\t: {model}\nmodel name\t: {name}\nstepping\t: 8\nflags\t\t: {flags}\n\n"
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        block.format(n=0, model=143, name="Xeon A", flags="fpu avx2 amx_bf16 avx512_bf16")
        + block.format(n=1, model=1, name="Other", flags="fpu")
    )
    record = host(cpuinfo)
    assert record["cpu"] == "Xeon A (6/143/8)"
    assert record["amx_bf16"] and record["avx512_bf16"]
    cpuinfo.write_text(block.format(n=0, model=1, name="EPYC", flags="fpu avx2"))
    assert host(cpuinfo)["cpu"] == "EPYC (6/1/8)" and not host(cpuinfo)["amx_bf16"]
    assert host(tmp_path / "absent")["cpu"] == "unknown (?/?/?)"


def _write_run(root, name, seed, metric, value, host=None):
    run = root / name / f"seed-{seed}"
    run.mkdir(parents=True)
    metrics = {
        "name": name,
        "seed": seed,
        "config": f"project/configs/{name.split('-')[0]}.cfg",
        "test_data": "corpus/ner/test.spacy",
        "overrides": ["--paths.train", "t.spacy", "--training.max_steps", "2000"],
        "train_seconds": 10.0,
        "test": {metric: value, "speed": 100.0},
    }
    if host:
        metrics["host"] = {"cpu": host, "cores": 2}
    (run / "metrics.json").write_text(json.dumps(metrics))


def test_report_averages_seeds_and_pairs_systems(tmp_path):
    report = load_script("report")
    runs = tmp_path / "runs"
    for seed, (base, elmo) in enumerate([(0.70, 0.80), (0.72, 0.90)]):
        _write_run(runs, "ner-baseline-10pct", seed, "ents_f", base)
        _write_run(runs, "ner-elmo-10pct", seed, "ents_f", elmo, host=f"CPU {seed}")
    _write_run(runs, "ner-elmo-adapted-10pct", 0, "ents_f", 0.83)
    _write_run(runs, "sst5-baseline", 0, "cats_micro_f", 0.40)
    _write_run(runs, "sst5-trf", 0, "cats_micro_f", 0.45)
    layers = tmp_path / "layers.json"
    layers.write_text(
        json.dumps(
            {"probes": {"pos": {"accuracy_per_layer": [0.8, 0.85, 0.9], "majority_baseline": 0.2, "best_layer": 2}}}
        )
    )
    result = CliRunner().invoke(
        _cli(report.main),
        [str(runs), str(tmp_path / "out.md"), "--layers", str(layers), "--archive", str(tmp_path / "kept")],
    )
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out.md").read_text()
    assert "from 7 runs (one `metrics.json` each, kept in `kept/runs/`)" in text
    assert (
        "| ner-elmo-10pct | ner.cfg, 2000 | ner/test.spacy | NER F1 | 85.00 ± 7.07 | 0: 80.00, 1: 90.00 | 10 | 100 | CPU 0; CPU 1 |"
        in text
    )
    assert (
        "| sst5-trf | sst5.cfg, 2000 | ner/test.spacy | accuracy | 45.00 (1 seed) | 0: 45.00 | 10 | 100 | not recorded |"
        in text
    )
    assert "| ner-10pct | 71.00 | 85.00 | +14.00 | 83.00 | +12.00 | - |" in text
    assert "| sst5 | 40.00 | - | - | - | - | 45.00 |" in text
    assert "| ner-10pct: ELMo >= baseline + 5.0 | +14.00 ± 5.10 | yes |" in text  # sqrt(0.005 / 2 + 0.0002 / 2)
    assert "| ner-10pct: ELMo with the adapted biLM >= baseline + 5.0 | +12.00 (1 seed) | yes |" in text
    assert "| ner-100pct: ELMo >= baseline + 2.5 | not run | - |" in text
    assert "| POS probe best on layer 1 | layer 2 (80.00 / 85.00 / 90.00) | no |" in text
    kept = sorted(p.name for p in (tmp_path / "kept" / "runs").iterdir())
    assert kept == [
        "ner-baseline-10pct-seed-0.json",
        "ner-baseline-10pct-seed-1.json",
        "ner-elmo-10pct-seed-0.json",
        "ner-elmo-10pct-seed-1.json",
        "ner-elmo-adapted-10pct-seed-0.json",
        "sst5-baseline-seed-0.json",
        "sst5-trf-seed-0.json",
    ]
    summary = json.loads((tmp_path / "out.json").read_text())
    assert summary["comparison"]["ner-10pct"]["elmo_minus_baseline"] == pytest.approx(0.14)
    assert summary["comparison"]["ner-10pct"]["elmo_adapted_minus_baseline"] == pytest.approx(0.12)


def test_report_reads_runs_known_only_from_their_logs(tmp_path):
    report = load_script("report")
    runs = tmp_path / "runs"
    _write_run(runs, "sst5-elmo", 0, "cats_micro_f", 0.41)
    train = "python -m spacy train project/configs/{cfg} --output x/{name}/seed-{seed} --system.seed {seed} --training.max_steps 900 --gpu-id -1"
    evaluate = "python -m spacy evaluate x/{name}/seed-{seed}/model-best project/corpus/sst5/test.spacy --output x"
    lines = []
    for name, cfg, seed, score in [
        ("sst5-baseline", "textcat.cfg", 0, 0.3819),
        ("sst5-baseline", "textcat.cfg", 1, 0.3928),
    ]:
        lines += [train.format(cfg=cfg, name=name, seed=seed), evaluate.format(name=name, seed=seed)]
        lines.append(f'{name} seed {seed}: {{"token_acc": null, "cats_score": 0.3, "cats_micro_p": {score}, "cats_mic')
    # A run that is also in EXPERIMENTS_DIR: its metrics.json wins over the log.
    lines.append('sst5-elmo seed 0: {"cats_micro_p": 0.99, "cats_mic')
    lines.append('ner-elmo-1pct seed 2: {"ents_p": 0.5, "ents_r": 0.6, "ents_f": 0.5712, "ents_per_type": {"LOC"')
    (tmp_path / "study.log").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(
        _cli(report.main), [str(runs), str(tmp_path / "out.md"), "--log", str(tmp_path / "study.log")]
    )
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out.md").read_text()
    assert "from 1 runs (one `metrics.json` each) and 3 runs known only from their logs" in text
    assert (
        "| sst5-baseline | textcat.cfg, 900 | sst5/test.spacy | accuracy | 38.73 ± 0.77 | 0: 38.19, 1: 39.28 | - | - |"
        in text
    )
    assert "| sst5 | 38.73 | 41.00 | +2.27 | - | - | - |" in text
    assert "| ner-elmo-1pct | ?, config | - | NER F1 | 57.12 (1 seed) | 2: 57.12 | - | - | not recorded |" in text


def test_report_counts_every_pretraining_stage_of_a_continued_bilm(tmp_path, tiny_bilm_dir):
    report = load_script("report")
    runs = tmp_path / "runs"
    _write_run(runs, "sst5-elmo", 0, "cats_micro_f", 0.41)
    bilm = tmp_path / "bilm"
    (bilm / "model-best").mkdir(parents=True)
    for name in ("options.json", "weights.hdf5"):
        (bilm / "model-best" / name).write_bytes((tiny_bilm_dir / name).read_bytes())
    (bilm / "metrics.jsonl").write_text(json.dumps({"step": 50, "tokens": 6000, "elapsed_seconds": 600.0}) + "\n")
    first = tmp_path / "first.jsonl"
    first.write_text(
        json.dumps({"step": 10, "tokens": 0, "elapsed_seconds": 0.0})
        + "\n"
        + json.dumps({"step": 100, "tokens": 120000, "elapsed_seconds": 60.0})
        + "\n"
    )
    args = [str(runs), str(tmp_path / "out.md"), "--bilm", str(bilm)]
    result = CliRunner().invoke(_cli(report.main), args)
    assert result.exit_code == 0, result.output
    assert "- Pretraining: 50 steps, 6,000 tokens, 10 minutes (10 tokens/s)." in (tmp_path / "out.md").read_text()
    result = CliRunner().invoke(_cli(report.main), [*args, "--earlier-stage", str(first)])
    assert result.exit_code == 0, result.output
    assert (
        "- Pretraining in 2 stages, each from the one before's weights: stage 1: 100 steps, 120,000 tokens, "
        "1 minutes (2,000 tokens/s); stage 2: 50 steps, 6,000 tokens, 10 minutes (10 tokens/s); "
        "126,000 tokens and 11 minutes in all." in (tmp_path / "out.md").read_text()
    )


def test_report_compares_a_second_hosts_runs_only_with_each_other(tmp_path):
    report = load_script("report")
    runs = tmp_path / "runs"
    for seed in (0, 1):
        _write_run(runs, "sst5-baseline", seed, "cats_micro_f", 0.40 + seed / 100, host="Xeon")
        _write_run(runs, "sst5-elmo", seed, "cats_micro_f", 0.43, host="Xeon")
    other = tmp_path / "other"
    for seed, (base, adapted) in enumerate([(0.36, 0.41), (0.38, 0.39)]):
        _write_run(other, "sst5-baseline", seed, "cats_micro_f", base, host="EPYC")
        _write_run(other, "sst5-elmo-adapted", seed, "cats_micro_f", adapted)
    records = tmp_path / "records"
    records.mkdir()
    for path in other.glob("*/seed-*/metrics.json"):
        (records / f"{path.parent.parent.name}-{path.parent.name}.json").write_text(path.read_text())
    out = tmp_path / "report" / "out.md"
    result = CliRunner().invoke(_cli(report.main), [str(runs), str(out), "--second-host", str(records)])
    assert result.exit_code == 0, result.output
    main, _, second = out.read_text().partition("## On a second host")
    assert "| sst5 | 40.50 | 43.00 | +2.50 | - | - | - |" in main
    assert "4 runs (`../records/`), each compared only with runs of that host" in second
    assert "| sst5 | 37.00 | - | - | 40.00 | +3.00 | - |" in second
    assert (
        "| sst5-baseline | sst5.cfg, 2000 | ner/test.spacy | accuracy | 37.00 ± 1.41 | 0: 36.00, 1: 38.00 | 10 | 100 | EPYC |"
        in second
    )
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["comparison"]["sst5"]["elmo_adapted"] is None
    assert summary["second_host"]["comparison"]["sst5"]["elmo_adapted_minus_baseline"] == pytest.approx(0.03)


def _cli(function):
    import typer

    app = typer.Typer()
    app.command()(function)
    return app
