"""A long table (thousands of rows) printed exactly as `common.table` prints it, in a
fraction of the time.

rich sizes a table's columns from the widest cell and the longest word of each column, so a
table of the few rows that hold those has the same columns as the whole table: rich renders
that one (title, header, borders, caption, styles). When each cell of every row fits its
column on one line, no row wraps, and each is a line of its cells padded to their columns;
those lines are made here. That rule is checked on the rows rich rendered, line for line;
where it does not hold (a cell to wrap, a styled cell, a box drawn otherwise), rich renders
the whole table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.segment import Segment

from costsched.cli.common import console, is_figure, printable, table

LONG = 200  # rows: a shorter table is rendered by rich alone
BATCH = 100  # lines printed at once (rich's time per line grows with a text's length)


def print_table(title: str, columns: list[str], rows: list[list[str]], *,
                detail: Sequence[str] = ()) -> None:
    """`console.print(table(title, columns, rows, detail=detail))`, quickly for many rows
    of plain text."""
    lines = _lines(title, columns, rows, detail) if len(rows) > LONG else None
    console.print(table(title, columns, rows, detail=detail) if lines is None
                  else _Lines(lines), markup=False)


class Lines:
    """Lines of text, each printed as `console.print(line, highlight=False, markup=False,
    soft_wrap=...)` prints it, in few calls. rich wraps each line of a text on its own,
    and a line that fits the console prints alike wrapped or not: such lines join any
    batch (a batch of them only is printed unwrapped, rich's quicker way); a longer one
    joins only the lines printed with its own `soft_wrap`. `flush` prints what is held."""

    def __init__(self) -> None:
        self.held: list[str] = []
        self.soft_wrap: bool | None = None  # None: every line held fits the console
        self.width = console.width

    def print(self, line: str, *, soft_wrap: bool = False) -> None:
        if cell_len(line) > self.width:
            if self.soft_wrap not in (None, soft_wrap):
                self.flush()
            self.soft_wrap = soft_wrap
        self.held.append(line)
        if len(self.held) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if self.held:
            console.print("\n".join(self.held), highlight=False, markup=False,
                          soft_wrap=self.soft_wrap is not False)
        self.held, self.soft_wrap = [], None


class _Lines:
    """Lines of segments, rendered as they are."""

    def __init__(self, lines: list[list[Segment]]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions
                         ) -> Iterator[Segment]:
        newline = Segment.line()
        for line in self.lines:
            yield from line
            yield newline


def _lines(title: str, columns: list[str], rows: list[list[str]],
           detail: Sequence[str]) -> list[list[Segment]] | None:
    """The table's lines, or None when rich must render it whole."""
    if not all(isinstance(v, str) for row in rows for v in row):
        return None
    plain = [[printable(v) for v in row] for row in rows]  # cell(v).plain
    if any(_awkward(v) for row in plain for v in row):
        return None
    few = _deciding(plain, len(columns))
    shown_rows = [rows[i] for i in few]
    rendered = list(console.render(table(title, columns, shown_rows, detail=detail),
                                   console.options))
    lines = list(Segment.split_lines(rendered))
    texts = ["".join(s.text for s in line) for line in lines]
    head = next((i for i, t in enumerate(texts) if t.startswith("┡")), None)
    bottom = next((i for i, t in enumerate(texts) if t.startswith("└")), None)
    if head is None or bottom is None or head < 1 or bottom - head - 1 != len(few):
        return None
    widths = [len(part) - 2 for part in texts[head][1:-1].split("╇")]
    names = _header_names(columns, texts[head - 1], widths)
    if names is None:
        return None
    shown = [columns.index(n) for n in names]
    right = [is_figure(columns[i]) for i in shown]
    made = [_row([plain[i][j] for j in shown], widths, right) for i in few]
    if made != texts[head + 1:bottom] or any(
            s.style or s.control for line in lines[head + 1:bottom] for s in line):
        return None  # rich draws rows otherwise: it renders the whole table
    body = []
    for row in plain:
        line = _row([row[j] for j in shown], widths, right)
        if line is None:
            return None
        body.append([Segment(line)])
    return lines[:head + 1] + body + lines[bottom:]


def _awkward(text: str) -> bool:
    """Text whose cell rich might not show as it is (spaces it may drop or wrap at)."""
    return text != text.strip() or "\n" in text or "\t" in text


def _deciding(plain: list[list[str]], n: int) -> list[int]:
    """The rows that hold each column's widest cell and longest word (by characters and by
    terminal cells), in table order."""
    keep = set()
    for j in range(n):
        best: dict[int, tuple[int, int]] = {}  # measure: (its largest value, the row)
        for i, row in enumerate(plain):
            text = row[j]
            words = text.split()
            if text.isascii():
                whole = cell_len(text)
                word = max(map(len, words), default=0)
                found = (whole, whole, word, word)
            else:
                found = (cell_len(text), len(text), max(map(cell_len, words), default=0),
                         max(map(len, words), default=0))
            for k, value in enumerate(found):
                if k not in best or value > best[k][0]:
                    best[k] = (value, i)
        keep.update(i for _, i in best.values())
    return sorted(keep)


def _header_names(columns: list[str], header: str, widths: list[int]) -> list[str] | None:
    """The columns shown, in order, from the table's header line."""
    parts = [p.strip() for p in header[1:-1].split("┃")]
    if len(parts) != len(widths) or any(p not in columns for p in parts):
        return None
    return parts


def _row(cells: list[str], widths: list[int], right: list[bool]) -> str | None:
    """A body line of `cells`, each padded to its column; None when one does not fit."""
    out = []
    for text, width, figure in zip(cells, widths, right, strict=True):
        gap = width - cell_len(text)
        if gap < 0:
            return None
        out.append(" " + (" " * gap + text if figure else text + " " * gap) + " ")
    return "│" + "│".join(out) + "│"
