"""On an Azure VM: whether Azure's Scheduled Events announce this VM's eviction.

The Instance Metadata Service answers GET /metadata/scheduledevents (header "Metadata:
true") with {"DocumentIncarnation": N, "Events": [{"EventId", "EventType", "EventStatus",
"Resources": [VM names], "NotBefore", ...}]}; a Spot VM about to be evicted has a
"Preempt" event naming it, at least 30 seconds ahead (learn.microsoft.com, "Scheduled
Events for Linux VMs"). Events are not acknowledged: the job keeps the whole notice to
checkpoint. A VM whose own name cannot be read takes any Preempt event as its own.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from urllib.parse import urlsplit, urlunsplit

HEADERS = {"Metadata": "true"}
NAME_PATH = "/metadata/instance/compute/name"
NAME_QUERY = "api-version=2021-02-01&format=text"
_TIMEOUT = 2.0
_name: dict[str, str] = {}  # the VM's name, by metadata server


def preempt_announced(url: str) -> bool:
    """Whether the Scheduled Events document at `url` has a Preempt event for this VM.
    Unreachable, or not a document, counts as no notice."""
    try:
        events = json.loads(_get(url)).get("Events") or []
    except (OSError, ValueError, AttributeError):
        return False
    mine = _vm_name(url)
    for event in events:
        if not isinstance(event, dict) or event.get("EventType") != "Preempt":
            continue
        resources = event.get("Resources") or []
        if not mine or not resources or mine in resources:
            return True
    return False


def _vm_name(url: str) -> str:
    """This VM's name from the metadata server of `url` ('' when it does not say)."""
    parts = urlsplit(url)
    if parts.netloc not in _name:
        try:
            name = _get(urlunsplit((parts.scheme, parts.netloc, NAME_PATH, NAME_QUERY, "")))
        except (OSError, ValueError):
            return ""
        _name[parts.netloc] = name.strip()
    return _name[parts.netloc]


def _get(url: str) -> str:
    request = urllib.request.Request(url, headers=HEADERS)
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
            return response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        raise OSError(f"HTTP {exc.code}") from None
