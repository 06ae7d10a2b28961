"""Job files as users hand them over: YAML read safely, each document taken for a
costsched job spec or a SkyPilot task, sweeps expanded, workdirs anchored to the file.

    specs = load("train.yaml")                       # every job of the file
    specs = load("task.yaml", envs={"LR": "0.1"})    # a SkyPilot task's envs given at launch
    pairs = read_jobs(["a.yaml", "b.yaml"])          # (source, spec) of every job of them

Reading loads no pandas, database layer or solver: a bad file is refused at once.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from costsched import file_limits
from costsched.jobspec import JobSpec, parse, refuse_passed_deadline
from costsched.model import InvalidInput
from costsched.skypilot import parse_task
from costsched.smallest_job import SCRIPT_RUNNERS, smallest_job
from costsched.spec_notes import REFUSED, throughput_notes, unknown_budget
from costsched.sweeps import expand_sweep, sweep_size, too_many
from costsched.vocabulary import closest

_OWN_KEYS = frozenset({"model", "throughputs", "steps", "epochs", "hours", "checkpoint",
                       "constraints", "sweep"})
# A YAML file in a folder is suggested as a task file when it has one of these (a task's
# own fields), or a name and one of a costsched job's (_OWN_KEYS).
_TASK_KEYS = frozenset({"run", "setup", "resources", "costsched", "file_mounts", "secrets",
                        "num_nodes"})
_LISTED = 5000  # entries of a folder looked at for a close file name
_PEEK_BYTES = 1 << 20  # a task file is far smaller: a bigger YAML is not suggested
_SKY_KEYS = frozenset({"resources", "costsched", "secrets", "file_mounts", "service",
                       "config", "pool", "volumes", "job_group"})
# Read in both (a job YAML's gang is written as a task's): they tell neither apart.
MAX_DEPTH = 100  # levels of nesting in a job file; a real one has fewer than ten
# Job files, specs, or jobs read already ((source, spec) pairs as `read_jobs` returns them).
Jobs = str | Path | JobSpec | Sequence[str | Path | JobSpec | tuple[str, JobSpec]]


def skypilot_task(doc: Any) -> bool:
    """A SkyPilot task: it has a field only SkyPilot tasks have (`resources`, a
    `costsched:` section, `secrets`, `file_mounts`...), or it is a bare task (a `run`
    without any of costsched's own fields). `num_nodes` belongs to both."""
    if not isinstance(doc, dict):
        return False
    return bool(_SKY_KEYS & doc.keys()) or ("run" in doc and not _OWN_KEYS & doc.keys())


def anchor_workdir(spec: JobSpec, folder: Path, where: str = "") -> JobSpec:
    """The spec with its workdir (and local file mounts) as absolute paths (a relative one
    is taken from `folder`, the spec file's), so that the job does not depend on where
    costsched was started. A workdir or local mount that is not there is refused, the
    file `where` named: the one check of `plan` and `launch`, as the file is read."""
    written: dict[str, str] = {}

    def anchored(path: str) -> str:
        out = str((folder / Path(path).expanduser()).resolve())
        written[out] = path
        return out

    mounts = [m.model_copy(update={"source": anchored(m.source)}) if "://" not in m.source
              else m for m in spec.task.mounts]
    update: dict[str, Any] = {}
    task: dict[str, Any] = {}
    needs: list[str] = []

    def missing(field: str, path: str, what: str) -> None:
        # Named as the file wrote it ('./data'), where it was looked for if relative.
        needs.append(f"{field} {path!r}: no such {what}"
                     + ("" if Path(path).expanduser().is_absolute()
                        else f" (relative to the file's folder, {folder.resolve()})"))

    if spec.workdir:
        update["workdir"] = anchored(spec.workdir)
        if "$" not in spec.workdir and not Path(update["workdir"]).is_dir():
            missing("workdir", spec.workdir, "directory")
    for given, mount in zip(spec.task.mounts, mounts, strict=True):
        if "://" not in given.source and "$" not in given.source and \
                not Path(mount.source).exists():
            missing(f"file_mounts.{given.path}: local path", given.source, "file or folder")
    if needs:
        raise InvalidInput(f"{where or folder}: field " + "; field ".join(needs))
    if written:
        task.update(mounts=mounts, as_written=written)
    if task:
        update["task"] = spec.task.model_copy(update=task)
    return spec.model_copy(update=update) if update else spec


class _SpecLoader(yaml.SafeLoader):
    """YAML's safe subset without aliases (a few lines of them can expand to gigabytes),
    without duplicate keys (YAML would keep the last one silently) and without nesting
    deeper than MAX_DEPTH (Python's recursion would break on it)."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"alias *{event.anchor} is not accepted in a job spec: write the "
                "value out", event.start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep: expected a job's "
                    "fields", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (list, dict)):
                continue  # SafeLoader refuses these itself
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate field {key!r}: each field may be given once",
                    key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
        """A date YAML cannot make ('2026-13-45') stays the text written, for the field
        that reads it to refuse with its name and the forms it accepts."""
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)


_SpecLoader.add_constructor("tag:yaml.org,2002:timestamp",
                            _SpecLoader.construct_yaml_timestamp)


def read(path: Path) -> list[Any]:
    """The file's YAML documents; InvalidInput with the line of the first problem."""
    from costsched.config import effective

    file_limits.check(path, file_limits.TASK, effective().files.task_mb)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InvalidInput(_not_there(path)) from None
    except IsADirectoryError:
        raise InvalidInput(_a_directory(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, UnicodeDecodeError):
            _refuse_other_kind(path)
        raise InvalidInput(f"{path}: cannot read ({exc})") from None
    try:
        docs = [d for d in yaml.load_all(text, Loader=_SpecLoader) if d is not None]
    except yaml.YAMLError as exc:
        _refuse_other_kind(path)
        line = _yaml_line(exc, text)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problem = problem.replace("'<stream end>'", "the end of the file").replace(
            "end of stream", "end of the file")
        raise InvalidInput(f"{path}{f': line {line}' if line else ''}: invalid YAML "
                           f"({problem})") from None
    except RecursionError:  # a flow collection deeper than the parser itself can go
        raise InvalidInput(f"{path}: invalid YAML (nested too deep: expected a job's "
                           "fields)") from None
    if any(not isinstance(d, dict) for d in docs):  # a script read as YAML is one string
        _refuse_other_kind(path)
    return docs


def _yaml_line(exc: yaml.YAMLError, text: str) -> int | None:
    """The line (from 1) where the YAML problem starts: the problem's, but where the file
    ends inside something left open (a '[' not closed, a quote), the line that opened it
    (PyYAML's context), else the file's last line: never a line past its end."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return None
    if mark.index < len(text.rstrip()):
        return mark.line + 1
    opened = getattr(exc, "context_mark", None)
    return opened.line + 1 if opened is not None else text.rstrip().count("\n") + 1


# Suffixes of files that may hold a job (JSON is YAML); another file that does not read as
# job fields is said to be of its kind rather than invalid YAML.
_JOB_SUFFIXES = frozenset({".yaml", ".yml", ".json"})


def _refuse_other_kind(path: Path) -> None:
    """InvalidInput for a file of another kind (train.py given as the job file): a script,
    with the smallest job that runs it."""
    suffix = path.suffix.lower()
    if suffix and suffix not in _JOB_SUFFIXES:
        runner = SCRIPT_RUNNERS.get(suffix)
        raise InvalidInput(f"{path}: not a job file (a {path.suffix} file): " + (
            smallest_job(f"{runner} {path.name}", str(path.parent), what="a script")
            if runner else
            "expected a costsched job file or a SkyPilot task (YAML); see examples/"))


def _not_there(path: Path) -> str:
    """'x: no such file', with the YAML files of its folder whose names are close to the
    one given ('mf-spot.yaml' for 'mf-spt.yaml'), written as the path was; a folder that
    is not there is named, with the close folders beside it. A command given as the file
    ('python train.py', as `sky launch` takes one) is said to be one, with the smallest
    job that runs it."""
    if len(str(path).split()) > 1:
        return f"{path}: no such file: {smallest_job(str(path))}"
    folder = path.parent
    if not folder.is_dir():
        close = _close(folder, [p for p in _listed(folder.parent) if p.is_dir()])
        return f"{path}: no such file (no folder {folder}{close})"
    return f"{path}: no such file" + close_files(path, (".yaml", ".yml"))


def close_files(path: Path, suffixes: tuple[str, ...] = ()) -> str:
    """'; did you mean 'dir/b.csv'?' naming the files beside `path` (those ending in one of
    `suffixes`, any file when none is given) whose names are close to its; '' if none."""
    return _close(path, [p for p in _listed(path.parent) if p.is_file() and (
        not suffixes or p.suffix.lower() in suffixes)])


def _listed(folder: Path) -> list[Path]:
    """What `folder` holds (the first few thousand entries), [] when it cannot be read."""
    try:
        return list(itertools.islice(folder.iterdir(), _LISTED)) if folder.is_dir() else []
    except OSError:
        return []


# How alike a file's name must be to the one given to be suggested: names of one folder
# share much ('mf-cap' and 'mf-spt' are 0.67 alike), a typo is closer.
_FILE_CUTOFF = 0.75


def _close(path: Path, found: list[Path]) -> str:
    """'; did you mean 'dir/b.yaml'?' naming those of `found` whose names (less their
    extension, which every one has) are close to `path`'s."""
    by_stem = {p.stem: p.name for p in sorted(found, reverse=True)}
    close = closest(path.stem, sorted(by_stem), _FILE_CUTOFF)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(str(path.with_name(by_stem[c])))
                                           for c in close) + "?"


def _a_directory(path: Path) -> str:
    """What to give instead of a directory: the task files it holds (YAML files that read
    as a SkyPilot task or a costsched job), else how a task file is named and what it says."""
    tasks = [p.name for p in sorted(path.glob("*.y*ml")) if _is_task_file(p)]
    if tasks:
        more = f" and {len(tasks) - 5} more" if len(tasks) > 5 else ""
        return (f"{path}: a directory, not a job file: give its job's YAML file (here: "
                f"{', '.join(tasks[:5])}{more})")
    return (f"{path}: a directory with no task file in it (no YAML file there has run:, "
            f"resources: or a costsched: section): write the task in a file such as "
            f"{path / 'task.yaml'} and give that file")


def _is_task_file(path: Path) -> bool:
    """Whether a YAML file's first document is a SkyPilot task or a costsched job: a
    mapping with a task's fields (run, resources, a costsched: section...) or a name and
    a job's (model, steps...). Read only when it is small; any problem is a no."""
    try:
        if not path.is_file() or path.stat().st_size > _PEEK_BYTES:
            return False
        doc = next(yaml.safe_load_all(path.read_text()), None)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return False
    if not isinstance(doc, dict):
        return False
    keys = {str(k) for k in doc}
    return bool(_TASK_KEYS & keys) or ("name" in keys and bool(_OWN_KEYS & keys))


def load(path: str | Path, max_sweep_jobs: int | None = None,
         envs: Mapping[str, str | None] | None = None,
         secrets: Collection[str] = (), at: datetime | None = None) -> list[JobSpec]:
    """Every job in a YAML file (one per document), sweeps expanded; at most `max_sweep_jobs`
    jobs (default: the config's launch.max_sweep_jobs). `envs`, `secrets`: values of envs
    and names of secrets given at launch for a SkyPilot task (`skypilot.parse_task`). `at`:
    the planning time, which a deadline given as a time must be after (refused before the
    document is parsed); None: not checked here."""
    path = Path(path)
    docs = read(path)
    if not docs:
        raise InvalidInput(f"{path}: no job in the file: expected fields name, run, model, "
                           "steps, ...")
    if len(docs) > 1 and any(skypilot_task(d) or (isinstance(d, dict) and set(d) == {"name"})
                             for d in docs):
        raise InvalidInput(f"{path}: {len(docs)} YAML documents: a SkyPilot pipeline; "
                           "costsched runs one task per file (`sky jobs launch` runs "
                           "pipelines)")
    parsed = []
    for i, doc in enumerate(docs, start=1):
        where = str(path) if len(docs) == 1 else f"{path} (document {i})"
        _refuse_empty_workdir(doc, where)
        if at is not None:
            name = str(doc.get("name") or path.stem) if isinstance(doc, dict) else path.stem
            refuse_passed_deadline(doc, where, name, skypilot_task(doc), at)
        if skypilot_task(doc):  # a SkyPilot task file, read as it is
            spec = parse_task(doc, where, path.stem, envs, secrets)
        else:
            if envs:
                raise InvalidInput(f"{where}: envs given at launch are for SkyPilot tasks; "
                                   "put a job spec's envs in its file")
            spec = parse(doc, where)
        parsed.append(anchor_workdir(spec, path.parent, where))
    from costsched.config import effective  # the configuration loads once the file reads well

    config = effective()
    parsed = [_noted(spec, config.budgets.named) for spec in parsed]
    if max_sweep_jobs is None:
        max_sweep_jobs = config.launch.max_sweep_jobs
    total = sum(sweep_size(spec) for spec in parsed)  # counted before any job is made
    if total > max_sweep_jobs:
        name = max(parsed, key=sweep_size).name
        raise InvalidInput(too_many(str(path), name, total, max_sweep_jobs))
    specs = [job for spec in parsed for job in expand_sweep(spec, max_sweep_jobs, str(path))]
    names = [s.name for s in specs]
    dupes = sorted(n for n, count in collections.Counter(names).items() if count > 1)
    if dupes:
        raise InvalidInput(f"{path}: field name: {dupes[0]!r} names more than one job")
    return specs


def _refuse_empty_workdir(doc: Any, where: str) -> None:
    """A `workdir` key with no value: YAML reads `workdir: ~` and `workdir:` alone as null,
    which would launch the job without its code (a paid boot and set-up for a run that
    cannot find its script), so it is refused rather than read as no workdir."""
    if isinstance(doc, dict) and "workdir" in doc and doc["workdir"] is None:
        raise InvalidInput(f"{where}: field workdir: empty (YAML reads `~` and a key with "
                           "no value as null, not as a folder): write the folder, e.g. "
                           "`workdir: .`, or leave the key out to run without code")


def _noted(spec: JobSpec, budgets: Collection[str]) -> JobSpec:
    """The spec with the notes `plan` gives of its file (`spec_notes`): its throughputs of
    GPUs it does not ask for, and a budget name `launch` refuses (`budgets`: those the
    configuration names)."""
    refused = unknown_budget(spec.constraints.budget_name, budgets, spec.task.sky)
    notes = [*throughput_notes(spec), *([REFUSED + refused] if refused else [])]
    if not notes:
        return spec
    return spec.model_copy(update={"task": spec.task.model_copy(
        update={"notes": [*spec.task.notes, *notes]})})


def read_jobs(jobs: Jobs, progress: Callable[[str, int, int], None] | None = None,
              envs: Mapping[str, str | None] | None = None,
              secrets: Collection[str] = (),
              at: datetime | None = None) -> list[tuple[str, JobSpec]]:
    """(source, spec) of every job in files and specs (a file may hold several); `envs`,
    `secrets`: given at launch for SkyPilot tasks; `at`: the planning time a deadline must
    be after (`load`). A (source, spec) pair, read before, is kept as it is.
    `progress(stage, done, total)` is called after each item."""
    items = [jobs] if isinstance(jobs, (str, Path, JobSpec)) else list(jobs)
    out: list[tuple[str, JobSpec]] = []
    for i, item in enumerate(items, start=1):
        if isinstance(item, JobSpec):
            out.append(("<spec>", item))
        elif isinstance(item, tuple):
            out.append(item)
        else:
            out.extend((str(item), spec)
                       for spec in load(item, envs=envs, secrets=secrets, at=at))
        if progress is not None:
            progress("reading job specs", i, len(items))
    refuse_duplicate_names(out)
    return out


def refuse_duplicate_names(specs: Iterable[tuple[str, JobSpec]]) -> None:
    """InvalidInput if two jobs of one submission (from one file or several) share a name:
    jobs are found by name afterwards."""
    first: dict[str, str] = {}
    for source, spec in specs:
        if spec.name in first:
            raise InvalidInput(f"{source}: field name: {spec.name!r} is also the name of a job "
                               f"in {first[spec.name]}: give each job a name of its own")
        first[spec.name] = source
