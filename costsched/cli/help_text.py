"""A command's help as its --help shows it: every paragraph filled to the terminal's width.
Typer joins the lines of a help's first paragraph and keeps the line breaks of the others,
so a paragraph written over several source lines would show each source line's end where
the terminal is narrower than the source ("starts likewise, / to do / the rest of them")."""

from __future__ import annotations

import inspect
from typing import Any


def one_line_paragraphs(text: str) -> str:
    """`text` (a docstring) with each paragraph on one line; a paragraph that starts with
    \\b (click's mark of text kept as written) keeps its lines."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split("\n"))
                       for p in paragraphs)


def reflow_help(command: Any) -> Any:
    """`command` (a click command or group, each subcommand of it too) with its help's
    paragraphs on one line each (`one_line_paragraphs`); once a command."""
    if command is not None and not getattr(command, "_reflowed", False):
        if command.help:
            command.help = one_line_paragraphs(command.help)
        command._reflowed = True
        for sub in (getattr(command, "commands", None) or {}).values():
            reflow_help(sub)
    return command
