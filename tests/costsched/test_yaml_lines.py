"""Invalid YAML is said at a line the file has: where the problem starts (an unclosed
bracket's line when the file ends inside it), never a line past its end."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.model import InvalidInput
from costsched.taskfile import load


@pytest.mark.parametrize(("text", "said"), [
    ("name: x\nrun: [a\n", "line 2: invalid YAML (expected ',' or ']', but got the end of "
                           "the file)"),
    ("name: x\nrun: {a: 1\n\n\n", "line 2: invalid YAML (expected ',' or '}', but got the "
                                  "end of the file)"),
    ("name: x\nrun: 'abc\n", "line 2: invalid YAML (found unexpected end of the file)"),
    ("name: a\nmodel: A3C\nsteps: 5: 6\n", "line 3: invalid YAML (mapping values are not "
                                           "allowed here)"),  # mid-file: as before
])
def test_invalid_yaml_names_a_line_of_the_file(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as caught:
        load(path)
    assert str(caught.value) == f"{path}: {said}"
