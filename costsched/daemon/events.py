"""The daemon's log: one logfmt line per event, secrets masked."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

log = logging.getLogger("costsched.daemon")
def logfmt(level: str = "info", **fields: Any) -> str:
    """One logfmt line: ts=... level=... then `fields` in order; values with spaces or
    quotes are quoted; secrets masked (`costsched.redact`)."""
    from costsched.redact import MASK, is_secret_name, redact

    ts = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    parts = [f"ts={ts}", f"level={level}"]
    for key, value in fields.items():
        text = f"{value:.2f}" if isinstance(value, float) else redact(str(value))
        text = MASK if is_secret_name(key) and text else text
        if not text or any(c in text for c in ' "=\\\n'):
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'
        parts.append(f"{key}={text}")
    return " ".join(parts)


def _emit(level: str, **fields: Any) -> None:
    log.log(logging.ERROR if level == "error" else logging.WARNING if level == "warning"
            else logging.INFO, logfmt(level, **fields))


def nodes_of(store: Any, job_id: int) -> dict[str, int]:
    """The `nodes` field of a job's line: {"nodes": N} for a job of N > 1 nodes, else {}."""
    try:
        nodes = (store.jobs.get(job_id).spec.get("spec") or {}).get("num_nodes", 1)
    except Exception:  # noqa: BLE001 - a line is logged even when its job cannot be read
        return {}
    return {"nodes": nodes} if isinstance(nodes, int) and nodes > 1 else {}


def _label(key: Sequence[str]) -> str:
    cloud, region, zone, instance_type, market, _ = key
    return f"{cloud}:{zone or region}:{instance_type}:{market}"


def _one_line(exc: BaseException) -> str:
    """An error in one line: its own words for costsched's errors (no class name in text
    a user reads), the class named for others (a bare KeyError's text is only its key)."""
    text = " ".join(str(exc).split())
    if text and type(exc).__module__.split(".")[0] in ("costsched", "launchers"):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _now() -> datetime:
    return datetime.now(timezone.utc)
