"""A SkyPilot task's fields of the wrong type, given to `plan`: one line naming the file, the
field and what is accepted, in words no secret masking takes for a secret, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

TASK = "name: t\nrun: echo hi\ncostsched: {throughputs: {V100: 1}, steps: 100}\n"


@pytest.mark.parametrize("field, said", [
    ("resources: {accelerators: V100, labels: [a]}",
     "field resources.labels: expected a mapping of NAME: value"),
])
def test_a_field_of_the_wrong_type_is_said_in_one_line(cli, tmp_path: Path, field: str,  # noqa: ANN001
                                                       said: str) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(TASK + field + "\n")
    result = cli("plan", path)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {path}: {said}"), line
    assert "***" not in line
