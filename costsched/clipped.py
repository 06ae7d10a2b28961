"""A line of free text (a launcher's words, a command's last line) cut to fit a brief
view: its paths shortened from their left first, so that the file a message names stays
('.../code/no_such_script.py'), and never a parenthesis left open by the cut."""

from __future__ import annotations

import re

# A path of three or more parts: '/a/b/c.py', 'C:\\a\\b\\c', 'a/b/c'.
_PATH = re.compile(r"(?:[A-Za-z]:)?[\\/]?(?:[^\s'\"()\[\]:,;\\/]+[\\/]){2,}[^\s'\"()\[\]:,;\\/]+")
MORE = "..."


def clipped(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: as it is where it fits; else each path in it
    (longest first) cut to its last two parts ('.../code/run.py'); else cut at the end,
    with '...' and a ')' for each parenthesis the cut left open."""
    if len(text) <= limit:
        return text
    for path in sorted({m.group(0) for m in _PATH.finditer(text)}, key=len, reverse=True):
        parts = re.split(r"[\\/]", path)
        short = f"{MORE}/{'/'.join(parts[-2:])}"
        if len(short) < len(path):
            text = text.replace(path, short)
        if len(text) <= limit:
            return text
    cut = text[:limit - len(MORE)].rstrip()
    while cut:
        closers = ")" * max(cut.count("(") - cut.count(")"), 0)
        if len(cut) + len(MORE) + len(closers) <= limit:
            return cut + MORE + closers
        cut = cut[:-1].rstrip()
    return text[:limit]
