"""What a start says of the job's file edited since its launch: a start runs the `setup`
and `run` its launch stored, `--repack` or not, so a fix made in the file's commands is
named with the launch that takes it."""

from __future__ import annotations

from pathlib import Path

import yaml

from costsched.service.jobs.start_code import edited_since_launch
from costsched.taskfile import load


def _file(folder: Path, run: str, setup: str = "") -> Path:
    path = folder / "sky.yaml"
    task = {"name": "clf", "workdir": ".", "run": run,
            "resources": {"accelerators": "L4:1", "use_spot": True}}
    if setup:
        task["setup"] = setup
    path.write_text(yaml.safe_dump(task))
    return path


def _stored(path: Path) -> dict:
    """The job's spec as its launch stores it: the file's job, and where it was read."""
    [spec] = load(path)
    return {"spec": spec.model_dump(mode="json"), "source": path.name,
            "source_path": str(path)}


def test_a_run_fixed_in_the_file_is_named_with_the_launch_that_takes_it(tmp_path: Path) -> None:
    path = _file(tmp_path, "python trian.py")
    stored = _stored(path)
    assert edited_since_launch(4, "clf", stored) == ""  # as launched: nothing to say
    _file(tmp_path, "python train.py")  # the typo fixed in the file
    said = edited_since_launch(4, "clf", stored)
    assert said == (f"note: {path} now gives another `run` than job 4's launch stored; a "
                    "start runs the stored one (--repack packs the workdir's files, not the "
                    f"file's commands); `costsched launch {path}` runs the file as it is "
                    "now, as a new job")


def test_setup_and_run_both_named(tmp_path: Path) -> None:
    path = _file(tmp_path, "python trian.py")
    stored = _stored(path)
    _file(tmp_path, "python train.py", setup="pip install numpy")
    assert "another `setup` and `run` than job 4's" in edited_since_launch(4, "clf", stored)


def test_a_file_gone_or_unreadable_or_another_job_says_nothing(tmp_path: Path) -> None:
    path = _file(tmp_path, "python trian.py")
    stored = _stored(path)
    path.write_text("name: [unclosed\n")  # no longer reads
    assert edited_since_launch(4, "clf", stored) == ""
    path.unlink()
    assert edited_since_launch(4, "clf", stored) == ""
    _file(tmp_path, "python train.py")
    assert edited_since_launch(4, "other", stored) == ""  # the file holds no such job now
