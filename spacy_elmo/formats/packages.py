"""biLMs as installable Python packages: built from a biLM folder, found by name through the
``spacy_elmo_bilms`` entry point group (as spaCy finds its pipeline packages).

A package ``NAME`` holds the folder's files under ``NAME/bilm/`` with a ``meta.json``, and
registers ``NAME = "NAME:bilm_dir"``, a function returning that folder.
"""

import json
import re
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from .allennlp import OPTIONS, find_weights, read_options

ENTRY_POINT_GROUP = "spacy_elmo_bilms"
DEFAULT_BILM = "en_elmo_small"
META = "meta.json"
# Files of a biLM folder that travel with it besides options.json and the weights.
EXTRA_FILES = ("softmax_weights.hdf5", "vocab.txt", "README.md", "perplexity.json")
# The version of the committed biLM's package (project.yml's vars.bilm_package_version).
DEFAULT_BILM_VERSION = "0.3.0"
PACKAGE_COMMAND = (
    "python -m spacy_elmo package-bilm project/report/bilm packages "
    f"--name {DEFAULT_BILM} --version {DEFAULT_BILM_VERSION}"
)

PathLike = Union[str, Path]


class BiLMNotFound(ValueError):
    """A biLM name or path that is neither a biLM folder nor an installed biLM package."""


def installed_bilms() -> Dict[str, Path]:
    """Every installed biLM package: name -> its biLM folder."""
    return {ep.name: Path(ep.load()()) for ep in entry_points(group=ENTRY_POINT_GROUP)}


def bilm_folder(name_or_path: PathLike) -> Path:
    """The biLM folder that ``name_or_path`` names: a folder with options.json and weights,
    or the name of an installed biLM package."""
    path = Path(name_or_path)
    if (path / OPTIONS).is_file():
        return path
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == str(name_or_path):
            return Path(ep.load()())
    installed = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    raise BiLMNotFound(
        f"No biLM {str(name_or_path)!r}: it is neither a folder with {OPTIONS} nor an installed biLM package "
        f"(installed: {', '.join(installed) or 'none'}; build one with `{PACKAGE_COMMAND}` and pip install its wheel)."
    )


def default_bilm_folder() -> Path:
    """The installed default English biLM, or a one-line error naming the ways to give one."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == DEFAULT_BILM:
            return Path(ep.load()())
    raise BiLMNotFound(
        f"No biLM given and the default {DEFAULT_BILM!r} is not installed. Give one as model.bilm (an installed biLM "
        "package's name or a biLM folder), or as model.options_file + model.weight_file; or build and install the "
        f"default: `{PACKAGE_COMMAND}` then pip install "
        f"packages/{DEFAULT_BILM}-{DEFAULT_BILM_VERSION}-py3-none-any.whl."
    )


def read_meta(folder: PathLike) -> Dict[str, Any]:
    """A biLM folder's meta.json ({} where it has none)."""
    path = Path(folder) / META
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def package_meta(folder: Path, name: str, version: str) -> Dict[str, Any]:
    """The package's meta: the folder's meta.json (training text, tokens, licence terms), the
    biLM's sizes and parameter count from options.json, its perplexities from perplexity.json."""
    from ..model import BiLM  # the model only to count parameters

    config = read_options(folder / OPTIONS)
    meta: Dict[str, Any] = {**read_meta(folder), "name": name, "version": version}
    meta["sizes"] = {
        "lstm_dim": config.lstm_dim, "projection_dim": config.projection_dim, "n_layers": config.n_layers,
        "n_highway": config.n_highway, "char_filters": sum(n for _, n in config.filters),
    }  # fmt: skip
    meta["parameters"] = sum(p.numel() for p in BiLM(config).parameters())
    if (folder / "perplexity.json").is_file():
        meta["perplexity"] = json.loads((folder / "perplexity.json").read_text(encoding="utf-8"))
    return meta


def write_package_source(folder: PathLike, tree: Path, name: str, version: str) -> Path:
    """A setuptools source tree for the biLM of ``folder`` under ``tree``; returns its root."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(
            f"Package name {name!r} must be a Python module name: lower-case letters, digits and _ (e.g. en_elmo_small)."
        )
    if not re.fullmatch(r"\d+(\.\d+)*", version):
        raise ValueError(f"Version {version!r} must be numbers separated by dots (e.g. 0.1.0).")
    folder = Path(folder)
    weights = find_weights(folder)
    meta = package_meta(folder, name, version)
    root = tree / f"{name}-{version}"
    data = root / name / "bilm"
    data.mkdir(parents=True)
    shutil.copy(folder / OPTIONS, data / OPTIONS)
    shutil.copy(weights, data / "weights.hdf5")
    for extra in EXTRA_FILES:
        if (folder / extra).is_file():
            shutil.copy(folder / extra, data / extra)
    (data / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    (root / name / "__init__.py").write_text(
        f'"""The biLM {name} {version} for spacy-elmo: nlp.add_pipe("elmo", config={{"model": {{"bilm": "{name}"}}}})."""\n'
        "from pathlib import Path\n\n\n"
        "def bilm_dir() -> Path:\n"
        '    """The folder with options.json, weights.hdf5 and meta.json."""\n'
        '    return Path(__file__).parent / "bilm"\n',
        encoding="utf-8",
    )
    description = meta.get("description", f"ELMo biLM {name} for spacy-elmo")
    (root / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools>=61"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        f'name = "{name}"\n'
        f'version = "{version}"\n'
        f"description = {json.dumps(description, ensure_ascii=False)}\n"  # TOML takes no surrogate-pair escapes
        'requires-python = ">=3.8"\n\n'
        f"[project.entry-points.{ENTRY_POINT_GROUP}]\n"
        f'{name} = "{name}:bilm_dir"\n\n'
        "[tool.setuptools]\n"
        f'packages = ["{name}"]\n\n'
        "[tool.setuptools.package-data]\n"
        f'{name} = ["bilm/*"]\n',
        encoding="utf-8",
    )
    return root


def package_bilm(folder: PathLike, output_dir: PathLike, name: str, version: str) -> List[Path]:
    """Build a wheel and an sdist of the biLM of ``folder`` into ``output_dir`` (setuptools'
    build backend); returns their paths. Nothing is left in output_dir if the build fails."""
    output = Path(output_dir)
    with tempfile.TemporaryDirectory(prefix="spacy-elmo-package-") as tmp:
        root = write_package_source(folder, Path(tmp) / "src", name, version)
        dist = Path(tmp) / "dist"
        dist.mkdir()
        script = (  # the backend rewrites sys.argv: read the folder first
            "import sys, setuptools.build_meta as backend; out = sys.argv[1]; "
            "print(backend.build_sdist(out)); print(backend.build_wheel(out))"
        )
        result = subprocess.run([sys.executable, "-c", script, str(dist)], cwd=root, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(
                f"Building the package failed (setuptools' build backend, exit {result.returncode}):\n{result.stderr[-2000:]}"
            )
        output.mkdir(parents=True, exist_ok=True)
        built: List[Path] = []
        for path in sorted(dist.iterdir()):
            shutil.move(str(path), output / path.name)
            built.append(output / path.name)
    return built


def describe_installed() -> List[Dict[str, Optional[Any]]]:
    """Name, version, folder, parameters and perplexities of each installed biLM package."""
    rows = []
    for name, folder in sorted(installed_bilms().items()):
        meta = read_meta(folder)
        rows.append(
            {
                "name": name,
                "version": meta.get("version"),
                "folder": str(folder),
                "parameters": meta.get("parameters"),
                "meta": meta,
            }
        )
    return rows
