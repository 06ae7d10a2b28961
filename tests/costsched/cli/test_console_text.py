"""Text the CLI prints appears as written: rich reads "[word]" as a style, so a line that
carries text not written in the command itself either escapes it (`user_text`) or is
printed with markup off; an install hint keeps its extra ("costsched[gcp]")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import costsched.cli

CLI = Path(costsched.cli.__file__).parent
# Calls whose result is a rich renderable that shows its text literally (`table` wraps
# each cell as Text).
RENDERABLES = {"Text", "table", "summary_table", "offerings_table", "instances_table",
               "_Lines"}


def _unsafe_prints(path: Path, root: Path = CLI) -> list[str]:
    """Each console.print / err_console.print of `path` whose text is not a literal, is not
    escaped with user_text and does not say whether it is markup ("file:line" under
    `root`)."""
    src = path.read_text()
    found = []
    for node in ast.walk(ast.parse(src)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "print" and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("console", "err_console") and node.args):
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) or any(k.arg == "markup" for k in node.keywords):
            continue
        if isinstance(first, ast.Call) and getattr(first.func, "id", None) in RENDERABLES:
            continue
        if "user_text(" in (ast.get_source_segment(src, node) or ""):
            continue
        found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_every_printed_line_either_escapes_its_text_or_turns_markup_off() -> None:
    unsafe = [hit for path in sorted(CLI.rglob("*.py")) for hit in _unsafe_prints(path)]
    assert unsafe == []


def test_the_checker_finds_an_unescaped_line(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('console.print(f"{hint}", highlight=False)\n'
                      'console.print(f"{user_text(hint)}")\n'
                      'err_console.print(f"{hint}", markup=False)\n'
                      'console.print(table(title, columns, rows))\n'
                      'err_console.print(hint)\n')
    assert _unsafe_prints(sample, tmp_path) == ["sample.py:1", "sample.py:5"]


def test_a_refresh_without_the_sdk_names_the_extra_to_install(
        cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from price_collectors import discovery
    from price_collectors.base import CollectorUnavailable as Unavailable

    def without_sdk(project):  # as the real client says when google-cloud-compute is absent
        raise Unavailable("gcp: google-cloud-compute is not installed: pip install "
                          "'costsched[gcp]'")

    monkeypatch.setattr(discovery, "_gcp_client", without_sdk)
    result = cli("catalog", "refresh", "--cloud", "gcp")
    assert result.exit_code == 1
    assert ("gcp: not refreshed: google-cloud-compute is not installed: "
            "pip install 'costsched[gcp]'") in result.stdout
