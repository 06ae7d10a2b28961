"""Every hint the command line prints works: a command it names (`costsched X ...`) exists,
with every option it names; an option a command's own module names ('--json gives every
job') is one of that command's; the caption of a table with columns left out names only
options the command has, and they work. Hints are collected from the source's strings
(messages, help texts and the commands' docstrings, which are their help), so a new hint
naming a missing command or option fails here."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from typer import _click as click
from typer.core import TyperGroup
from typer.main import get_command

import costsched
from costsched.cli import app
from costsched.cli import common as cli_common
from costsched.store import PriceStore
from tests.costsched.report.scenario import NOW, at, fill

SOURCE = Path(costsched.__file__).parent
# `costsched report --wide`, or `report --wide` where the text speaks of costsched already.
COMMAND_HINT = re.compile(r"`(?:costsched )?([a-z][^`]*)`")
OPTION = re.compile(r"(?<![\w`/-])(--[a-z][a-z0-9-]*)")
# Options of other programs that messages tell the user to run ("gcloud auth ... --role").
OTHERS = ("gcloud", "aws", "az", "pip", "gsutil", "python", "systemctl", "crontab")
NOT_OURS = re.compile(rf"\b({'|'.join(OTHERS)})\b[^`'\"]*$")
SHARED = {"common.py", "long_table.py", "__init__.py",  # used by many commands
          "sky_options.py"}  # (what plan, launch and logs do instead of sky launch)


@cache
def root() -> TyperGroup:
    return get_command(app)  # type: ignore[return-value]


@cache
def every_command() -> tuple[tuple[tuple[str, ...], click.Command], ...]:
    return tuple(commands(root()))


def commands(group: TyperGroup, path: tuple[str, ...] = ()
             ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        yield (*path, name), command
        if isinstance(command, TyperGroup):
            yield from commands(command, (*path, name))


def options_of(command: click.Command) -> set[str]:
    return {"--help", *(o for p in command.params for o in (*p.opts, *p.secondary_opts)
                        if o.startswith("--"))}


@cache
def strings(path: Path) -> tuple[tuple[int, str], ...]:
    """(line, text) of each string the module may print: its literals and f-strings' text
    (never an option's own declaration), and its command functions' docstrings (their
    help); other docstrings speak to programmers."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    texts: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("Option",
                                                                             "Argument"):
            skipped.update(id(a) for a in node.args)  # '--wide', '--reconcile/--no-...'
        elif (isinstance(node, (ast.List, ast.Tuple)) and node.elts
              and getattr(node.elts[0], "value", None) in OTHERS):
            skipped.update(id(a) for a in node.elts)  # ["systemctl", "--user", ...]: argv
        elif isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body:
            first = node.body[0]
            command = isinstance(node, ast.FunctionDef) and any(
                getattr(d, "id", getattr(d, "attr", "")) in ("friendly_errors", "command")
                or getattr(getattr(d, "func", None), "attr", "") == "command"
                for d in node.decorator_list)
            if (not command and isinstance(first, ast.Expr)
                    and isinstance(first.value, ast.Constant)):
                skipped.add(id(first.value))
        elif isinstance(node, ast.JoinedStr):
            skipped.update(id(v) for v in node.values)
            texts.append(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.append(node)
    out = []
    for node in texts:
        if isinstance(node, ast.JoinedStr):
            out.append((node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}"
                                             for v in node.values)))
        elif id(node) not in skipped:
            out.append((node.lineno, node.value))
    return tuple(out)


def source_files() -> list[Path]:
    return sorted(p for p in SOURCE.rglob("*.py") if "revisions" not in p.parts)


def resolve(words: list[str]) -> tuple[click.Command, list[str]] | str:
    """The command `words` name (after 'costsched') and the words left; or why not."""
    command: click.Command = root()
    path = []
    while isinstance(command, TyperGroup) and words and not words[0].startswith("-"):
        found = command.get_command(click.Context(command), words[0])
        if found is None:
            return f"no command {' '.join([*path, words[0]])!r}"
        path.append(words.pop(0))
        command = found
    if isinstance(command, TyperGroup) and not words:
        return "" if path else "no command named"
    return command, words


ROOTS = set(root().list_commands(click.Context(root())))


def hints(text: str) -> list[str]:
    """The commands `text` names in backquotes: `costsched X ...`, or `X ...` where X is one
    of costsched's commands."""
    return [h for h in COMMAND_HINT.findall(text)
            if re.search(rf"`costsched {re.escape(h)}`", text) or h.split()[0] in ROOTS]


def check_hint(text: str) -> list[str]:
    """What is wrong with `costsched TEXT` ('' parts: nothing)."""
    problems = []
    for alternative in re.split(r"\s+\|\s+", text):
        # A placeholder is a word ('--cloud {}'), or the options a word is followed by
        # where it is glued to one ('daemon install{}': ' --db URL' or nothing).
        filled = re.sub(r"(?<=\w)\{\}", " X", alternative).replace("{}", "X")
        words = [w.strip("[]") for w in filled.split()]
        words = [w for w in words if w and w != "..."]
        # 'throughput set/import': either subcommand.
        if len(words) >= 2 and "/" in words[1] and not words[1].startswith("-"):
            for each in words[1].split("/"):
                problems += check_hint(" ".join([words[0], each, *words[2:]]))
            continue
        found = resolve(words)
        if isinstance(found, str):
            if found:
                problems.append(f"`costsched {alternative}`: {found}")
            continue
        command, rest = found
        for word in rest:
            option = word.split("=")[0]
            if option.startswith("--") and option not in options_of(command):
                problems.append(f"`costsched {alternative}`: no option {option}")
    return problems


def test_every_costsched_command_a_message_names_exists() -> None:
    problems, seen = [], 0
    launchers = sorted((SOURCE.parent / "launchers").rglob("*.py"))  # their messages too
    for path in [*source_files(), *launchers]:
        for line, text in strings(path):
            for hint in hints(text):
                seen += 1
                problems += [f"{path.relative_to(SOURCE.parent)}:{line}: {p}"
                             for p in check_hint(hint)]
    assert seen > 20  # the scan sees the hints
    assert problems == []


def test_every_command_the_dashboard_names_exists() -> None:
    """The dashboard's pages name commands too (`<code>costsched collect</code>`)."""
    named = [(path.name, hint) for path in sorted((SOURCE / "dashboard").rglob("*.html"))
             for hint in re.findall(r"<code>costsched ([^<]+)</code>", path.read_text())]
    assert len(named) >= 3
    assert [f"{name}: {p}" for name, hint in named for p in check_hint(hint)] == []


def test_every_option_a_command_names_is_its_own() -> None:
    """A bare option in a command module's text is an option of that module's commands;
    elsewhere (services, reports), of some command."""
    by_module: dict[str, set[str]] = {}
    every: set[str] = set()
    for _, command in every_command():
        options = options_of(command)
        every |= options
        module = getattr(command.callback, "__module__", "") or ""
        by_module.setdefault(module, set()).update(options)
    uses = {f"costsched.cli.{path.stem}": re.findall(r"from (costsched\.cli\.\w+) import",
                                                     path.read_text())
            for path in sorted((SOURCE / "cli").glob("*.py"))}
    grown = True
    while grown:  # a module a command's module calls, directly or through another
        grown = False
        for module, used in uses.items():
            for name in used:
                before = len(by_module.setdefault(name, set()))
                by_module[name].update(by_module.get(module, set()))
                grown |= len(by_module[name]) > before
    problems, seen = [], 0
    for path in source_files():
        module = "costsched." + ".".join(path.relative_to(SOURCE).with_suffix("").parts)
        own = by_module.get(module) if path.name not in SHARED else None
        for line, text in strings(path):
            text = COMMAND_HINT.sub("", text)  # a command's hint is checked above, in full
            for found in OPTION.finditer(text):
                if NOT_OURS.search(text[:found.start()]):
                    continue
                seen += 1
                allowed = own if own is not None else every
                if found.group(1) not in allowed:
                    problems.append(f"{path.relative_to(SOURCE)}:{line}: {found.group(1)} "
                                    f"in {text[:80]!r}")
    assert seen > 50
    assert problems == []


def test_the_check_finds_a_hint_that_does_not_work() -> None:
    assert check_hint("report --wide") == []
    assert check_hint("report --widest") == ["`costsched report --widest`: no option --widest"]
    assert check_hint("reprot") == ["`costsched reprot`: no command 'reprot'"]
    assert check_hint("throughput set/shwo") == [
        "`costsched throughput shwo`: no command 'throughput shwo'"]
    assert check_hint("launch | migrate --dry-run | stop | start") == []


def test_a_table_caption_names_what_the_command_has(monkeypatch: pytest.MonkeyPatch,
                                                    cli) -> None:
    """Narrow terminal: `report` leaves columns out and says --wide or --json shows them,
    and `report --wide` (the hint followed) shows them all."""
    store = PriceStore(os.environ["COSTSCHED_DB"])
    fill(store)
    monkeypatch.setattr(cli_common.console, "width", 70)
    until = at(NOW).isoformat()
    narrow = cli("report", "--until", until)
    assert narrow.exit_code == 0, narrow.output
    captions = [" ".join(c.split()) for c in
                re.findall(r"not shown: [^()]+\(([^)]*)\)", narrow.output)]
    assert captions and all(c.startswith("--wide or --json shows") for c in captions)
    wide = cli("report", "--until", until, "--wide")
    assert wide.exit_code == 0, wide.output
    assert "not shown" not in wide.output
    # Outside a command (no --wide, no --json): the caption promises no option.
    shown = cli_common.table("t", ["a", "b"], [["x" * 60, "y" * 60]], detail=["b"])
    assert shown.caption == "not shown: b (a wider terminal shows it)"
