"""The README names every extra pyproject.toml offers, and `make demo` installs what the
README's next commands need without a cloud account (`costsched dashboard`: the dashboard
extra), so that a new user's next command runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project's dependency below 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
# A command the README runs, and the extra it needs; those of a cloud need an account too,
# and the README says to install their extra where it runs them.
NEEDS = {"costsched dashboard": "dashboard"}


def extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return set(project["optional-dependencies"])


def demo_extras() -> set[str]:
    """The extras `make demo`'s install puts in."""
    makefile = (ROOT / "Makefile").read_text()
    named = dict(re.findall(r"^(\w+) :?= (.*)$", makefile, re.M))
    [line] = re.findall(r"^\$\(VENV\)/\.installed:.*\n\t(.*)$", makefile, re.M)
    found = re.search(r"\.\[([^\]]*)\]", re.sub(r"\$\((\w+)\)",
                                               lambda m: named.get(m.group(1), ""), line))
    return set(found.group(1).split(",")) if found else set()


def test_the_readme_lists_every_extra() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = {e for e in extras() if f"`{e}`" not in readme}
    assert extras() >= {"aws", "dashboard", "dev"} and missing == set()


def test_make_demo_installs_what_the_readmes_commands_need() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = "\n".join(re.findall(r"```sh\n(.*?)```", readme, re.S))
    needed = {extra for command, extra in NEEDS.items() if command in blocks}
    assert needed == {"dashboard"}  # the README runs it
    assert needed <= demo_extras() <= extras()
