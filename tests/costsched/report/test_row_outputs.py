"""`report`, `report --json` and `report --html` write, on SQLite and PostgreSQL,
exactly what the report wrote when its tables were computed on frames (`golden/`, written
by `report_stores.main` from that code): every table, figure, rounding, word and chart.
The budgets now (`cli.budgets`) are another command's and left out of the text and the
HTML file."""

from __future__ import annotations

import json

import pytest

from tests.costsched.report.report_stores import STORES, golden, outputs


@pytest.mark.parametrize("name", sorted(STORES))
def test_the_report_writes_what_it_wrote_on_frames(name: str, empty_url: str) -> None:
    # The HTML file once: its tables and charts come from the same rows on either store.
    html = not empty_url.startswith("postgresql")
    found = outputs(name, empty_url, html=html)
    expected = {k: v for k, v in golden(name).items() if html or not k.endswith(".html")}
    assert sorted(found) == sorted(expected)
    for label, text in expected.items():
        if label.endswith(".json"):
            assert json.loads(found[label]) == json.loads(text), label
        assert _steady(found[label]) == _steady(text), label


def _steady(text: str) -> str:
    """`text` (or the HTML file) without its "Budgets now" table: a budget's figures are
    another command's (`budgets_now`), made beside the report's."""
    if "<h2>Budgets now</h2>" in text:
        head, _, rest = text.partition("<h2>Budgets now</h2>")
        return head + rest.split("</table>", 1)[1]
    head, _, rest = text.partition("Budgets now")
    if not rest:
        return text
    return head.rsplit("\n", 1)[0] + rest.split("┘\n", 1)[1]
