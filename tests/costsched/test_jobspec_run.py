"""A job's command and environment are checked when the spec is read: a NUL byte, an
over-long command, or an environment name that no process could be given is refused in one
line naming the field, before anything is stored or started."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from costsched.jobspec import MAX_COMMAND_BYTES
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from costsched.taskfile import load
from launchers.local import LocalLauncher

BASE = {"name": "j", "model": "ResNet-50", "steps": 100, "run": "python train.py"}


def spec_file(tmp_path: Path, **changes: object) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({**BASE, **changes}))
    return path


@pytest.mark.parametrize(("changes", "message"), [
    ({"run": "python train.py\0--evil"}, "field run: a NUL character in the command"),
    ({"run": "x" * (MAX_COMMAND_BYTES + 1)}, "field run: 65,537 bytes; expected at most "
                                             "65,536"),
    ({"envs": {"A=B": "1"}}, "field envs: 'A=B': expected an environment variable name"),
    ({"envs": {"": "1"}}, "field envs: '': expected an environment variable name"),
    ({"envs": {"A\0": "1"}}, "field envs: 'A\\x00': expected an environment variable"),
    ({"envs": {"LR": "0.1\0"}}, "field envs: LR: a value with a NUL character"),
    ({"sweep": {"L=R": [1, 2]}}, "field sweep: 'L=R': expected an environment variable"),
])
def test_a_bad_command_or_environment_is_one_line_naming_the_field(
        tmp_path: Path, changes: dict, message: str) -> None:
    path = spec_file(tmp_path, **changes)
    with pytest.raises(InvalidInput) as caught:
        load(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and "\n" not in text
    assert message in text


def test_a_command_at_the_limit_is_accepted(tmp_path: Path) -> None:
    [spec] = load(spec_file(tmp_path, run="x" * MAX_COMMAND_BYTES))
    assert len(spec.run) == MAX_COMMAND_BYTES


def test_nothing_is_stored_for_a_refused_spec(tmp_path: Path) -> None:
    store = PriceStore(str(tmp_path / "store.sqlite"))
    with pytest.raises(InvalidInput, match="field envs"):
        service.launch(store, spec_file(tmp_path, envs={"A=B": "1"}),
                       launcher=LocalLauncher(tmp_path / "instances"))
    assert store.jobs.list().empty and store.jobs.placements().empty
    store.dispose()
