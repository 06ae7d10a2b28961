"""A hint looks for each cloud SDK it names once (`costsched.clouds.hints.command`): a
plan prints two hints, and each look searches the import path."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from costsched.clouds import hints


@pytest.mark.parametrize("blocked", [(), ("boto3",), ("boto3", "google.auth", "requests")])
def test_each_sdk_is_looked_for_once(monkeypatch: pytest.MonkeyPatch,
                                     blocked: tuple[str, ...]) -> None:
    for module in blocked:
        monkeypatch.setitem(sys.modules, module, None)
    expected = hints.collect_hint()
    looked: Counter[str] = Counter()
    real = hints.installed

    def counted(module: str) -> bool:
        looked[module] += 1
        return real(module)

    monkeypatch.setattr(hints, "installed", counted)
    assert hints.collect_hint() == expected  # the same words
    assert looked and max(looked.values()) == 1, looked
