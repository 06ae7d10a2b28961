"""Ignore files in `.gitignore` syntax, with git's meaning: a pattern is a glob, never a
regular expression, and every line git accepts is accepted here (a line git could never
match, such as an unclosed `[`, matches nothing, as in git).

    rules = parse_ignore(".venv/\\n*.log\\n!keep.log\\n", base="")
    ignored(rules, "logs/a.log", is_dir=False)   # True: the last rule that matches decides

Patterns: `#` comments, blank lines, trailing spaces dropped unless escaped with `\\`, `!`
to re-include, a trailing `/` for directories only, a leading or inner `/` anchoring the
pattern to the ignore file's directory (else it matches a name at any depth), `*` and `?`
(never across `/`), bracket expressions (`[a-z]`, `[!0-9]`, `[^x]`, `[[:alpha:]]`; a range
whose ends are reversed matches nothing), `\\` escaping the next character, and `**`: as
`**/` at the start or after a `/` it matches any number of directories, as `/**` at the
end everything inside, and elsewhere it is a `*`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_NEVER = "(?!)"  # a regular expression that matches nothing
# POSIX classes as git knows them (ASCII), as members of a Python character class.
_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\x0b\\x0c", "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


@dataclass(frozen=True)
class Rule:
    base: str  # the ignore file's directory, relative to the workdir ('' for the top)
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the path from `base`, not the last component


def parse_ignore(text: str, base: str = "") -> list[Rule]:
    """The rules of an ignore file's text (see the module's doc); never raises."""
    rules = []
    for raw in text.splitlines():
        line = _trim(raw.rstrip("\r"))
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        if not line:
            continue
        rules.append(Rule(base, re.compile(glob_regex(line), re.DOTALL), negate, dir_only,
                          anchored))
    return rules


def _trim(line: str) -> str:
    """The line without its trailing spaces, but for one escaped by a backslash."""
    end = len(line)
    while end and line[end - 1] == " ":
        if _escaped(line, end - 1):
            break
        end -= 1
    return line[:end]


def _escaped(line: str, i: int) -> bool:
    slashes = 0
    while i - slashes - 1 >= 0 and line[i - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1


def glob_regex(pattern: str) -> str:
    """A regular expression (always a valid one) matching what the glob `pattern` matches
    in a '/'-separated path."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            double = j - i >= 2 and (i == 0 or pattern[i - 1] == "/")
            if double and j == n:
                out.append(".*")  # 'a/**' or '**': everything
            elif double and pattern[j] == "/":
                out.append("(?:.*/)?")  # '**/': any number of directories, none included
                j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            regex, i = _bracket(pattern, i)
            if regex is None:
                return _NEVER  # as git: a malformed bracket makes the pattern match nothing
            out.append(regex)
        elif c == "\\":
            if i + 1 >= n:
                return _NEVER  # a trailing backslash escapes nothing: git matches nothing
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "^" + "".join(out) + "$"


def _bracket(pattern: str, start: int) -> tuple[str | None, int]:
    """The character class of the bracket expression at `start` and the index after it;
    None when it is malformed (unclosed, or an unknown [:class:])."""
    i, n = start + 1, len(pattern)
    negated = i < n and pattern[i] in "!^"
    if negated:
        i += 1
    members: list[str] = []
    previous: str | None = None  # the last single character, which a '-' may range from
    first = True
    while True:
        if i >= n:
            return None, n
        c = pattern[i]
        if c == "]" and not first:
            break
        first = False
        if c == "\\":
            if i + 1 >= n:
                return None, n
            previous = pattern[i + 1]
            members.append(_char(previous))
            i += 2
        elif c == "-" and previous is not None and i + 1 < n and pattern[i + 1] != "]":
            high, i = pattern[i + 1], i + 2
            if high == "\\":
                if i >= n:
                    return None, n
                high, i = pattern[i], i + 1
            if previous <= high:
                members.append(f"{_char(previous)}-{_char(high)}")
            previous = None
        elif c == "[" and pattern.startswith("[:", i):
            close = pattern.find("]", i + 2)
            if close < 0:
                return None, n
            if pattern[close - 1] != ":" or close - 1 < i + 2:
                previous = "["  # not a class: a '[' like any other
                members.append(_char("["))
                i += 1
                continue
            name = pattern[i + 2:close - 1]
            if name not in _CLASSES:
                return None, n
            members.append(_CLASSES[name])
            previous = None
            i = close + 1
        else:
            previous = c
            members.append(_char(c))
            i += 1
    body = "".join(members)
    if negated:
        return f"[^/{body}]", i + 1
    if not body:
        return _NEVER, i + 1
    return f"(?!/)[{body}]", i + 1  # never '/', as in a path


def _char(c: str) -> str:
    return f"\\U{ord(c):08x}"


def ignored(rules: Iterable[Rule], path: str, is_dir: bool) -> bool:
    """Whether `path` (relative to the workdir, '/'-separated) is excluded: the last rule
    that matches decides."""
    verdict = False
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if rule.base:
            if not path.startswith(rule.base + "/"):
                continue
            rel = path[len(rule.base) + 1:]
        else:
            rel = path
        subject = rel if rule.anchored else rel.rsplit("/", 1)[-1]
        if rule.regex.match(subject):
            verdict = not rule.negate
    return verdict
