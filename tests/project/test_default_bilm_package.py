"""The committed biLM's package: the version `make demo` installs, the one `spacy project run
package-bilm` builds and the one the missing-default error tells users to build are the same."""

from pathlib import Path

import srsly

from spacy_elmo.formats.packages import DEFAULT_BILM, PACKAGE_COMMAND

REPO = Path(__file__).parents[2]


def test_project_makefile_and_error_message_name_the_same_package_version():
    version = srsly.read_yaml(REPO / "project.yml")["vars"]["bilm_package_version"]
    assert f"--name {DEFAULT_BILM} --version {version}" in PACKAGE_COMMAND
    assert f"project/packages/{DEFAULT_BILM}-{version}-py3-none-any.whl" in (REPO / "Makefile").read_text()
