# Set-up and entry points. `make demo` runs the main job, `make test` the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-slow bench venv clean format

venv: $(STAMP)

# torch==2.13.0 first: it is a local CPU wheel; an unpinned torch would pull a CUDA build.
$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test,transformers,project]"
	touch $(STAMP)

# The project's demo (vectors in context, NER with and without ELMo, pretraining), after
# installing the committed biLM as the package that nlp.add_pipe("elmo") uses by default.
demo: $(STAMP)
	$(PY) -m spacy project run package-bilm .
	$(PY) -m pip install -q --no-deps project/packages/en_elmo_small-0.3.0-py3-none-any.whl
	$(PY) -m spacy project run demo .

# The linter and the formatter's check first (settings in pyproject.toml), then the suite.
test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m pytest -q

# pytest's exit code 5 (no test is marked slow) is not a failure.
test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow || [ $$? -eq 5 ]

bench: $(STAMP)
	$(PY) benchmarks/bench_bilm.py

format: $(STAMP)
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

clean:
	rm -rf $(VENV) build *.egg-info
