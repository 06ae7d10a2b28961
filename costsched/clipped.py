"""A line of free text (a launcher's words, a command's last line) cut to fit a brief
view: its paths shortened from their left first, so that the file a message names stays
('.../code/no_such_script.py'), cut between words, never within one, and never a
parenthesis left open by the cut."""

from __future__ import annotations

import re

# A path of three or more parts: '/a/b/c.py', 'C:\\a\\b\\c', 'a/b/c'.
_PATH = re.compile(r"(?:[A-Za-z]:)?[\\/]?(?:[^\s'\"()\[\]:,;\\/]+[\\/]){2,}[^\s'\"()\[\]:,;\\/]+")
MORE = "..."


def clipped(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: as it is where it fits; else each path in it
    (longest first) cut to its last two parts ('.../code/run.py'); else cut at the end
    between two words ('(No such file or...)', not '(No such file or direc...)'), with
    '...' and a ')' for each parenthesis the cut left open."""
    if len(text) <= limit:
        return text
    for path in sorted({m.group(0) for m in _PATH.finditer(text)}, key=len, reverse=True):
        parts = re.split(r"[\\/]", path)
        short = f"{MORE}/{'/'.join(parts[-2:])}"
        if len(short) < len(path):
            text = text.replace(path, short)
        if len(text) <= limit:
            return text
    cut = _between_words(text, limit - len(MORE))
    while cut:
        closers = ")" * max(cut.count("(") - cut.count(")"), 0)
        if len(cut) + len(MORE) + len(closers) <= limit:
            return cut + MORE + closers
        cut = _between_words(cut, len(cut) - 1)
    return text[:limit]


def _between_words(text: str, size: int) -> str:
    """`text`'s first `size` characters or fewer, ending where a word ends: a word the
    cut would split is left out whole (unless it is the only word: then it is cut), and
    so is a parenthesis it would leave empty."""
    cut = text[:size]
    if size < len(text) and text[size].isalnum() and cut[-1:].isalnum():
        start = max(cut.rfind(" "), cut.rfind("("))  # the split word starts after it
        if start >= 0 and cut[:start + 1].strip():
            cut = cut[:start + 1]
    return cut.rstrip().removesuffix("(").rstrip()
