"""`plan` opens its store once, for the plan and for the notes printed under it: with no
store yet, one store in memory holds the bundled prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.store import PriceStore

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "resnet50-anywhere.yaml"


@pytest.fixture()
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URL of each store opened."""
    urls: list[str] = []
    original = PriceStore.__init__

    def counted(self: PriceStore, url: str | None = None, **kwargs: object) -> None:
        original(self, url, **kwargs)
        urls.append(self.url)

    monkeypatch.setattr(PriceStore, "__init__", counted)
    return urls


def test_plan_opens_its_store_once(cli, opened: list[str]) -> None:  # noqa: ANN001
    result = cli("plan", EXAMPLE)
    assert result.exit_code == 0, result.output
    assert len(opened) == 1, opened


def test_plan_with_no_store_yet_opens_one_in_memory(cli, opened: list[str],  # noqa: ANN001
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DB", str(tmp_path / "not-made.sqlite"))
    result = cli("plan", EXAMPLE)
    assert result.exit_code == 0, result.output
    assert opened == ["sqlite://"] and not (tmp_path / "not-made.sqlite").exists()
