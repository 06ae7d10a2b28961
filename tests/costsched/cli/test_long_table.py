"""A long table and many lines print character for character as rich prints them one by
one, on a pipe and on a terminal (styles included), whatever the console's width: where a
cell would wrap, rich renders the whole table."""

from __future__ import annotations

import random

import pytest
from rich.console import Console

from costsched.cli import common, long_table
from costsched.cli.common import table
from costsched.cli.long_table import LONG, Lines, print_table

COLUMNS = ["id", "job", "state", "placement", "instance", "progress", "cost $", "migrations",
           "recoveries"]
DETAIL = ["recoveries", "migrations", "instance"]


def _rows(n: int, seed: int, odd: bool) -> list[list[str]]:
    """`n` rows like status's; `odd`: with wide characters, control characters and a long
    word among them."""
    rng = random.Random(seed)
    names = ["resnet", "bert-large-sweep", "llama-ft", "t5"] + (
        ["训练任务", "tab\there", "a" * 40, "[bold]not markup[/bold]"] if odd else [])
    rows = []
    for i in range(n):
        zone = rng.choice(["us-east-1a", "us-west-2b", "europe-west4-a"])
        rows.append([str(i + 1), f"{rng.choice(names)}-{i}",
                     rng.choice(["running", "succeeded", "failed"]),
                     f"aws {zone} p3.2xlarge spot" if rng.random() < 0.7 else "-",
                     rng.choice(["running", "-", "terminated"]),
                     f"~{rng.randint(0, 100)}% (estimated)" if rng.random() < 0.3
                     else f"{rng.randint(0, 100)}%",
                     f"${rng.uniform(0, 5000):,.2f}", str(rng.randint(0, 3)),
                     str(rng.randint(0, 12))])
    return rows


def _consoles(width: int, terminal: bool) -> Console:
    return Console(width=width, record=True, force_terminal=terminal, color_system="truecolor"
                   if terminal else None, file=open("/dev/null", "w"))  # noqa: SIM115


def _printed(monkeypatch: pytest.MonkeyPatch, width: int, terminal: bool, draw) -> str:  # noqa: ANN001
    console = _consoles(width, terminal)
    monkeypatch.setattr(common, "console", console)
    monkeypatch.setattr(long_table, "console", console)
    draw(console)
    return console.export_text(styles=True)


@pytest.mark.parametrize("width", [200, 120, 90, 60])
@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("odd", [False, True])
def test_a_long_table_prints_as_rich_prints_it(monkeypatch: pytest.MonkeyPatch, width: int,
                                               terminal: bool, odd: bool) -> None:
    # Past LONG (the quick way's threshold) and BATCH lines: the same rules hold for more.
    rows = _rows(LONG + 50, seed=width, odd=odd)
    fast = _printed(monkeypatch, width, terminal,
                    lambda c: print_table("Jobs", COLUMNS, rows, detail=DETAIL))
    rich = _printed(monkeypatch, width, terminal,
                    lambda c: c.print(table("Jobs", COLUMNS, rows, detail=DETAIL)))
    assert fast == rich
    assert fast.count("\n") >= len(rows)


def test_the_quick_way_draws_the_rows_when_they_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(LONG * 3, seed=1, odd=False)
    monkeypatch.setattr(long_table, "console", _consoles(200, False))
    monkeypatch.setattr(common, "console", long_table.console)
    assert long_table._lines("Jobs", COLUMNS, rows, DETAIL) is not None
    # A cell too wide for its column (it wraps): rich draws the table.
    rows[7][1] = "a very long job name " * 20
    assert long_table._lines("Jobs", COLUMNS, rows, DETAIL) is None


@pytest.mark.parametrize("width", [200, 80, 40])
@pytest.mark.parametrize("terminal", [False, True])
def test_many_lines_print_as_each_printed_alone(monkeypatch: pytest.MonkeyPatch, width: int,
                                                terminal: bool) -> None:
    rng = random.Random(width)
    words = ["job", "12:", "launch", "on", "aws", "us-east-1a", "训练", "[red]x[/red]",
             "p3.2xlarge", "a" * 70, "$1,234.5600", ""]
    lines = [(" ".join(rng.choice(words) for _ in range(rng.randint(0, 30))),
              rng.random() < 0.4) for _ in range(700)]

    def alone(console: Console) -> None:
        for line, soft in lines:
            console.print(line, highlight=False, markup=False, soft_wrap=soft)

    def together(console: Console) -> None:
        out = Lines()
        for line, soft in lines:
            out.print(line, soft_wrap=soft)
        out.flush()

    assert _printed(monkeypatch, width, terminal, together) == \
        _printed(monkeypatch, width, terminal, alone)
