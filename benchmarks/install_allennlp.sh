#!/usr/bin/env bash
# Install AllenNLP 2.10.1's ELMo into its own venv (benchmarks/.venv-allennlp, gitignored) so
# bench_bilm.py can compare against it. Never touches the project venv.
#
# AllenNLP 2.10.1 pins torch<1.13 and torchvision; we keep torch 2.13.0 (the project's build),
# install AllenNLP with --no-deps plus only what `allennlp.modules.elmo` imports, and make its
# torchvision imports optional (only its vision modules use torchvision).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${ALLENNLP_VENV:-$HERE/.venv-allennlp}"
PYTHON="${PYTHON:-python3}"

test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
PIP="$VENV/bin/pip"
"$PIP" install -q torch==2.13.0
"$PIP" install -q --no-deps allennlp==2.10.1
# Exactly what `from allennlp.modules.elmo import _ElmoBiLm` needs (allennlp/__init__ pulls in
# allennlp.data and allennlp.modules). cached-path 1.1.x pins huggingface-hub < 0.11, too old for
# any transformers that runs on Python 3.11, so the hub is upgraded in a second step (pip warns);
# it stays < 1.0, because AllenNLP imports HfFolder, which huggingface-hub 1.0 removed.
"$PIP" install -q numpy h5py spacy lmdb dill base58 more-itertools fairscale "cached-path>=1.1.3,<1.2"
"$PIP" install -q "huggingface-hub<1.0" "transformers>=4.30,<5"

# torchvision optional: wrap each top-level torchvision import in try/except ImportError.
"$VENV/bin/python" - <<'EOF'
import pathlib, re
import allennlp

root = pathlib.Path(allennlp.__file__).parent
pattern = re.compile(r"^(import torchvision(?:\.[\w.]+)?(?: as \w+)?)$", re.MULTILINE)
for path in root.rglob("*.py"):
    text = path.read_text()
    if not pattern.search(text):
        continue
    patched = pattern.sub(lambda m: f"try:\n    {m.group(1)}\nexcept ImportError:  # optional\n    pass", text)
    path.write_text(patched)
    print(f"made torchvision optional in {path.relative_to(root.parent)}")
EOF

"$VENV/bin/python" - <<'EOF'
import torch
from allennlp.modules.elmo import _ElmoBiLm  # noqa: F401
from allennlp.version import VERSION

assert torch.__version__.startswith("2.13.0"), f"torch {torch.__version__} in the AllenNLP venv; expected 2.13.0"
print(f"AllenNLP {VERSION} ELMo importable with torch {torch.__version__}")
EOF
