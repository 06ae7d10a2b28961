"""`risk import` given a file as a user has it (saved with a byte order mark, a folder, an
empty path, not text, not JSON): one line naming the file and what is accepted, exit code
2, no traceback, nothing stored."""

from __future__ import annotations

from pathlib import Path

import pytest

KINDS = ["advisor", "placement", "eviction"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("given, said", [
    ("folder", "a directory: expected a saved JSON document"),
    ("binary.json", "not UTF-8 text: expected a saved JSON document"),
    ("broken.json", "not valid JSON (line 1, column 2): expected a saved JSON document"),
    ("", "path '': expected a saved JSON document"),
])
def test_a_file_that_is_no_document_is_refused_in_one_line(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, given: str,  # noqa: ANN001
        said: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe{}")
    (tmp_path / "broken.json").write_text("{,}")
    result = cli("risk", "import", given, "--kind", kind)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    [line] = result.stderr.splitlines()
    where = f"{given}: " if given else ""
    assert line == f"error: {where}{said}", line


@pytest.mark.parametrize("kind", KINDS)
def test_a_document_saved_with_a_byte_order_mark_is_read(cli, tmp_path: Path,  # noqa: ANN001
                                                         kind: str) -> None:
    """Its content is then judged as any other's (an empty document's fault, not the BOM)."""
    path = tmp_path / "saved.json"
    path.write_bytes(b"\xef\xbb\xbf[]")
    result = cli("risk", "import", path, "--kind", kind)
    assert "BOM" not in result.output and "not valid JSON" not in result.output, result.output
