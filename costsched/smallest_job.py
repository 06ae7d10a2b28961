"""What to write when a command, or a script, is given where a job file goes (`costsched
launch 'python train.py'`, as `sky launch` takes one): a job is a YAML file, and the
smallest one that runs the command, written by one shell line.

    smallest_job("python train.py")
    # "a job is a YAML file (a costsched job or a SkyPilot task), not a command; the
    #  smallest that runs it: `printf '%s\\n' 'name: train' 'workdir: .'
    #  'run: python train.py' > train.yaml` writes it; give train.yaml instead"
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

# The programs a script of each suffix is run with (`python train.py`).
SCRIPT_RUNNERS = {".py": "python", ".sh": "bash"}
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def smallest_job(command: str, workdir: str = ".", *, what: str = "a command") -> str:
    """The words for `command` given where a job file goes (`what` it is: a command, a
    script): what a job is, and the shell line that writes the smallest job running it
    in `workdir` (as a job file in the current folder names it), in a file of the current
    folder that does not exist yet."""
    name = _name(command)
    file = _new_file(Path(), name)
    run = f"run: {command}"
    lines = [f"name: {name}", f"workdir: {workdir}",
             *([run] if _plain(command) else ["run: |", f"  {command}"])]
    written = " ".join(shlex.quote(line) for line in lines)
    return (f"a job is a YAML file (a costsched job or a SkyPilot task), not {what}; the "
            f"smallest that runs it: `printf '%s\\n' {written} > {file}` writes it; give "
            f"{file} instead")


def _name(command: str) -> str:
    """The job's name: the first script's the command runs ('train' of 'python train.py'),
    else its program's ('nvidia-smi'), in the letters a name is best written in."""
    words = command.split()
    script = next((w for w in words if Path(w).suffix.lower() in SCRIPT_RUNNERS), None)
    name = Path(script).stem if script else Path(words[0]).name if words else ""
    return _NOT_IN_NAME.sub("-", name).strip("-") or "job"


def _new_file(folder: Path, name: str) -> str:
    """'train.yaml', else 'job.yaml', 'job-2.yaml' ...: a file `folder` does not hold yet
    (the line given never writes over one)."""
    files = [f"{name}.yaml", "job.yaml", *(f"job-{i}.yaml" for i in range(2, 1000))]
    return next((f for f in files if not (folder / f).exists()), "job-new.yaml")


def _plain(command: str) -> bool:
    """Whether `run: COMMAND` reads back as the command (no ': ', '#', quote at its start)."""
    try:
        return yaml.safe_load(f"run: {command}") == {"run": command}
    except yaml.YAMLError:
        return False
