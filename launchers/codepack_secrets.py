"""Task files as a job's code packs them: the values of the secrets they write blanked.

A SkyPilot task may write a secret's value, under `secrets:` (`secrets: {HF_TOKEN: hf_...}`)
or, as most tasks do, under `envs:` (`envs: {WANDB_API_KEY: ...}`), and a costsched job its
`task.written_secrets` or its `envs:`; an env counts when it is named like a secret, by the
one rule by which costsched masks what it prints (`costsched.redact.is_secret_name`: a name
ending in KEY, TOKEN, SECRET, PASSWORD...). The launch holds a secret's value in memory
only, and stores an env's with the job. Such files often sit in the workdir (`workdir: .`,
sky.yaml beside sky-prod.yaml), which is packed with the job's code, stored beside its
checkpoints and unpacked on every instance. So every file of it that writes such a value
(the job's own file, and each *.yaml or *.yml file that reads as a task) is packed instead
with each such value replaced by `null`, every other byte as written (its comments, order
and layout): what a user reading the instance's copy expects, as `plan --emit sky` writes
the task. The job gets the values in its environment, from the launch. Files that write no
value, or do not read as YAML, are packed as they are; only those whose text holds
`secrets` or `envs` are read as YAML, so a large workdir packs fast. A file that holds a
value elsewhere too (a comment, a command) is left out, with a warning; so is every other
file, of any kind or size, that holds the value of a secret costsched knows for the launch
(one a task file in the workdir writes, one given at launch, one configured): a value is
looked for as its UTF-8 bytes. A value shorter than a job's output is masked from
(`MIN_MASKED` characters) is looked for nowhere else, as it would be found in ordinary
words.

    blanked("secrets:\\n  HF_TOKEN: hf_x1  # mine\\n")   # 'secrets:\\n  HF_TOKEN: null  # mine\\n'
    blanked("envs: {WANDB_API_KEY: k-1, LR: 0.1}")  # 'envs: {WANDB_API_KEY: null, LR: 0.1}'
"""

from __future__ import annotations

import io
import logging
import os
import stat
import tarfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from costsched.redact import is_secret_name
from launchers.log_masking import MIN_MASKED

log = logging.getLogger("costsched.codepack")
_NULL = "tag:yaml.org,2002:null"
# Where a job file writes secrets' values: a SkyPilot task's, a costsched job's.
_PLACES = (("secrets",), ("task", "written_secrets"))
# Where it writes envs' values (a SkyPilot task's and a costsched job's alike): those of
# the envs named like a secret are blanked too.
_ENVS = ("envs",)
SUFFIXES = (".yaml", ".yml")  # the files besides the job's own read as task files
# In the text of every file that writes one (written_secrets too).
_MARKS = (b"secrets", b"envs")


def job_file_name(workdir: Path, names: list[str], links: dict[str, str],
                  job_file: Path | None) -> str | None:
    """The packed name of the job's file, when the workdir holds it (a link to it is
    packed as a link: its target is the one blanked)."""
    if job_file is None or not job_file.is_file():
        return None
    real = os.path.realpath(job_file)
    return next((rel for rel in names if rel not in links
                 and os.path.realpath(workdir / rel) == real), None)


@dataclass
class Blanking:
    """What a pack holds instead of a workdir's files as they are: `texts`, the task files
    with their secrets' values as null (packed name: contents); `left_out`, the files it
    leaves out (said in a warning each)."""

    texts: dict[str, bytes] = field(default_factory=dict)
    left_out: set[str] = field(default_factory=set)


def blanking(workdir: Path, files: list[str], mine: str | None = None,
             written: Collection[str] = (), known: Collection[str] = ()) -> Blanking:
    """How the workdir's `files` (its regular files: links are packed as links) are packed:
    every task file with the secrets' values it writes blanked (`mine`, the job's own file,
    with `written`, the values the launch read from it; every *.yaml or *.yml file whose
    text holds `secrets` or `envs` and reads as YAML); every file that holds a value of
    `MIN_MASKED` characters or more of those, or of `known` (those given at launch and
    configured), elsewhere, left out with a warning naming it (never the value). Every
    file is read whole, binary or not, in `CHUNK`s: a value is looked for as its UTF-8
    bytes (the pack's size limit, launch.max_code_mb, bounds the bytes read)."""
    plan = Blanking()
    own: dict[str, list[str]] = {}
    for rel in files:
        dealt = _blank_file(workdir, rel, written if rel == mine else None)
        if dealt is None:
            continue
        if isinstance(dealt, str):
            _left_out(plan, workdir, rel, dealt)
        else:
            plan.texts[rel], own[rel] = dealt
    values = sorted({v.encode() for v in (*written, *known, *(v for vs in own.values()
                                                                for v in vs))
                     if len(v) >= MIN_MASKED}, key=len, reverse=True)
    for rel in files:
        if rel in plan.left_out or not values:
            continue
        if rel in plan.texts:
            if any(v.encode() in plan.texts[rel] for v in own[rel] if len(v) >= MIN_MASKED):
                _left_out(plan, workdir, rel, _ELSEWHERE)
            elif any(v in plan.texts[rel] for v in values):
                _left_out(plan, workdir, rel, _HOLDS)
        elif _holds(workdir / rel, values):
            _left_out(plan, workdir, rel, _HOLDS)
    return plan


_ELSEWHERE = (": a secret's value it writes is elsewhere in it too (a comment, a command), "
              "and would be stored with the code")
_HOLDS = ": it holds a secret's value, which would be stored with the code"
CHUNK = 1 << 20  # bytes read at a time when a file is looked through for values


def _holds(path: Path, values: list[bytes]) -> bool:
    """Whether the file holds any of `values` (longest first), read in `CHUNK`s that
    overlap by the longest's length less one byte; False when it cannot be read (the
    packing says so, as for any file)."""
    keep = len(values[0]) - 1
    tail = b""
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                window = tail + chunk
                if any(v in window for v in values):
                    return True
                tail = window[-keep:] if keep else b""
    except OSError:
        return False
    return False


def _blank_file(workdir: Path, rel: str, written: Collection[str] | None
                ) -> tuple[bytes, list[str]] | str | None:
    """The file `rel` with the secrets' values it writes as null, those of its envs named
    like a secret's too (every other byte as written), and those values, when it writes
    any: the job's own file (`written` given: a file named by any suffix), or a *.yaml or
    *.yml file whose text holds `secrets` or `envs` and reads as YAML. Why it is left out
    when it is the job's own and can no longer be read or read as YAML; None: packed as
    it is."""
    mine = written is not None
    if not mine and not rel.lower().endswith(SUFFIXES):
        return None
    try:
        data = (workdir / rel).read_bytes()
    except OSError as exc:
        if not mine:
            return None  # said by the caller, as for any file it cannot read
        return f" ({exc.strerror}){_UNREAD}"
    if not mine and not any(mark in data for mark in _MARKS):  # most files never parsed
        return None
    try:
        text, values = _blank(data.decode())  # its line ends as written
    except (UnicodeDecodeError, ValueError):
        # Not a task file, when another: as it is; the job's own was one at launch.
        return f" (it no longer reads as YAML){_UNREAD}" if mine else None
    if not mine and not values:
        return None
    return text.encode(), [*values, *(written or ())]


def add_text(tar: tarfile.TarFile, workdir: Path, rel: str, data: bytes) -> None:
    """Add `data` as the file `rel` (its executable bit as `codepack._add` keeps it)."""
    info = tarfile.TarInfo(rel)
    info.size = len(data)
    info.mode = 0o755 if (workdir / rel).stat().st_mode & stat.S_IXUSR else 0o644
    tar.addfile(info, io.BytesIO(data))


_UNREAD = ": it writes secrets' values, which could not be left out of it"


def _left_out(plan: Blanking, workdir: Path, rel: str, why: str) -> None:
    plan.left_out.add(rel)
    plan.texts.pop(rel, None)
    log.warning("workdir %s: %s left out of the job's code%s", workdir, rel, why)


def blanked(text: str) -> str:
    """`text` (a job file's YAML, every document of it) with the value of each secret it
    writes, and of each env it names like a secret, replaced by null; ValueError when it
    does not read as YAML."""
    return _blank(text)[0]


def _blank(text: str) -> tuple[str, list[str]]:
    """(`blanked(text)`, the values blanked)."""
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        raise ValueError("not YAML") from None  # (its words quote the file: never said)
    found = {(node.start_mark.index, node.end_mark.index): node.value
             for doc in documents for node in _values(doc)}
    for start, end in sorted(found, reverse=True):  # from the end: those before keep places
        written = text[start:end]
        # A block scalar (|, >) ends after its line breaks: they stay.
        text = text[:start] + "null" + written[len(written.rstrip("\r\n")):] + text[end:]
    return text, list(found.values())


def _values(document: yaml.Node | None) -> Iterator[yaml.ScalarNode]:
    """Each secret's value `document` writes (neither null nor empty), and each value of
    an env named like a secret's (`redact.is_secret_name`)."""
    for place in (*_PLACES, _ENVS):
        node = document
        for key in place:
            node = _get(node, key)
        if isinstance(node, yaml.MappingNode):
            for name, value in node.value:
                if (isinstance(value, yaml.ScalarNode) and value.tag != _NULL and value.value
                        and (place != _ENVS or (isinstance(name, yaml.ScalarNode)
                                                and is_secret_name(name.value)))):
                    yield value


def _get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key),
                None)
