"""The job file as its code is packed: the values of the secrets it writes blanked.

A SkyPilot task may write a secret's value (`secrets: {HF_TOKEN: hf_...}`), and a costsched
job its `task.written_secrets`; the launch holds such a value in memory only. The file often
sits in the workdir it names (`workdir: .`), so it would be packed with the job's code,
stored beside its checkpoints and unpacked on every instance. It is packed instead with
each such value replaced by `null`, every other byte as written (its comments, order and
layout): what a user reading the instance's copy expects, the same task given its secrets
at launch, as `plan --emit sky` writes it. The job gets the values in its environment.

    blanked("secrets:\\n  HF_TOKEN: hf_x1  # mine\\n")   # 'secrets:\\n  HF_TOKEN: null  # mine\\n'
"""

from __future__ import annotations

import io
import logging
import os
import stat
import tarfile
from collections.abc import Collection, Iterator
from pathlib import Path

import yaml

log = logging.getLogger("costsched.codepack")
_NULL = "tag:yaml.org,2002:null"
# Where a job file writes secrets' values: a SkyPilot task's, a costsched job's.
_PLACES = (("secrets",), ("task", "written_secrets"))


def job_file_name(workdir: Path, names: list[str], links: dict[str, str],
                  job_file: Path | None) -> str | None:
    """The packed name of the job's file, when the workdir holds it (a link to it is
    packed as a link: its target is the one blanked)."""
    if job_file is None or not job_file.is_file():
        return None
    real = os.path.realpath(job_file)
    return next((rel for rel in names if rel not in links
                 and os.path.realpath(workdir / rel) == real), None)


def add_blanked(tar: tarfile.TarFile, workdir: Path, rel: str, written: Collection[str]
                ) -> bool:
    """Add the job's file with the secrets' values it writes as null (every other byte as
    written); whether it was added. Left out, with a warning, when it no longer reads as
    YAML or holds a value elsewhere too (a comment, a command): nothing else is blanked."""
    path = workdir / rel
    try:
        text = blanked(path.read_bytes().decode())  # its line ends as written
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it no longer reads as YAML"
        log.warning("workdir %s: %s left out of the job's code (%s): it writes secrets' "
                    "values, which could not be left out of it", workdir, rel, why)
        return False
    if any(value in text for value in written):
        log.warning("workdir %s: %s left out of the job's code: a secret's value it writes "
                    "is elsewhere in it too (a comment, a command), and would be stored with "
                    "the code", workdir, rel)
        return False
    info = tarfile.TarInfo(rel)
    data = text.encode()
    info.size = len(data)
    info.mode = 0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644  # as `codepack._add`
    tar.addfile(info, io.BytesIO(data))
    return True


def blanked(text: str) -> str:
    """`text` (a job file's YAML, every document of it) with the value of each secret it
    writes replaced by null; ValueError when it does not read as YAML."""
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        raise ValueError("not YAML") from None  # (its words quote the file: never said)
    spans = sorted({span for doc in documents for span in _values(doc)}, reverse=True)
    for start, end in spans:  # from the end: the spans before keep their places
        written = text[start:end]
        # A block scalar (|, >) ends after its line breaks: they stay.
        text = text[:start] + "null" + written[len(written.rstrip("\r\n")):] + text[end:]
    return text


def _values(document: yaml.Node | None) -> Iterator[tuple[int, int]]:
    """(start, end) in the text of each secret's value `document` writes (not null)."""
    for place in _PLACES:
        node = document
        for key in place:
            node = _get(node, key)
        if isinstance(node, yaml.MappingNode):
            for _, value in node.value:
                if isinstance(value, yaml.ScalarNode) and value.tag != _NULL:
                    yield value.start_mark.index, value.end_mark.index


def _get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key),
                None)
