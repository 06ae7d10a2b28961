"""Options, parsing and output helpers shared by the CLI commands."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial, wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from typer._click.globals import get_current_context

from costsched.clouds.hints import collect_hint
from costsched.model import InvalidInput, TryAgain
from costsched.redact import redact
from costsched.service.views import frame_records
from costsched.service.views import json_default as _json_default

if TYPE_CHECKING:
    import pandas as pd

# Piped output (files, tests, CI logs) gets a wide page instead of rich's default 80
# columns, so that tables are not cut; a terminal keeps its own width.
_PIPED_WIDTH = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 200
# No emoji codes: a name or a path with ":cd:" in it is printed as written (and rich's table
# of codes is not loaded).
console = Console(width=_PIPED_WIDTH, emoji=False)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200, emoji=False)


def bar_hidden(json_out: bool) -> bool:
    """Whether a progress bar stays off: with --json, and off a terminal, where a bar
    cannot be erased and would leave its last frame or a blank line behind."""
    return json_out or not err_console.is_terminal

def configured_db(db: str | None) -> str | None:
    """The store a command uses: --db as given, else the configuration file's `db` (as
    `costsched config show` lists it), unless $COSTSCHED_DB names one; None: $COSTSCHED_DB's,
    else the default store."""
    from costsched.service.store_files import ENV_DB

    if db is not None or os.environ.get(ENV_DB):
        return db
    from costsched.config import effective

    return effective().db or None


def reads_store(db: str | None) -> str | None:
    """A command that reads a store never creates one: a store file that does not exist
    (--db, the configuration's db, $COSTSCHED_DB or the default one) is named in one
    line."""
    return _read_store(db, configured_db(db))


def writes_store(db: str | None, new_store: bool) -> str | None:
    """The store a command that writes uses (`configured_db`): the default store (the one
    every command uses: $COSTSCHED_DB's, the configuration's db, the user data
    directory's) is made if missing, a store --db names only with `new_store` (--new-store):
    a --db that does not exist yet is named in one line, as for a command that reads (a
    typo would split the prices or the jobs across stores)."""
    if db is None:
        configured = configured_db(db)
        refuse_url(None, configured)
        return configured
    if new_store or _same_store(db, configured_db(None)):
        refuse_url(db, db)
        return db
    return _read_store(db, db, makes="add --new-store to make it (unasked, only the "
                       "default store is made)")


def _same_store(db: str, other: str | None) -> bool:
    """Whether `db` names the store `other` does (None: the default one)."""
    from costsched.service.store_files import store_file

    mine, theirs = store_file(db), store_file(other)
    return db == other or (mine is not None and theirs is not None
                           and mine.resolve() == theirs.resolve())


def _read_store(given: str | None, db: str | None, makes: str = "") -> str | None:
    """`reads_store` of the store `db`, resolved from --db `given` (`configured_db`);
    `makes`: what makes it (default: the commands that make a store)."""
    from costsched.service.store_files import missing_store, not_sqlite

    refuse_url(given, db)
    missing = missing_store(db)
    if missing is None and (other := not_sqlite(db)):  # (a job file given as the store)
        _refuse(given, db, other)
    server = _server_without_store(given, db) if missing is None else None
    if missing is None and server is None:
        return db
    what = ("no costsched store in this database yet" if server else
            f"no such store ({missing.resolve()})" if missing else "")
    # A file beside it named alike: the store meant, and no new one proposed first.
    close = _close_store(missing) if missing is not None else ""
    # (a command that writes makes a store --db names only when told to: `writes_store`)
    flag = " --new-store" if given is not None else ""
    makes = makes or (f"`costsched launch JOB.yaml{flag}`, {collect_hint()}"
                      f"{' with --new-store' if flag else ''} or `costsched prices import "
                      f"FILE{flag}` makes one")
    said = f"{what}{close} If not, {makes}" if close else f"{what}; {makes}"
    _refuse(given, db, said, server)


def _source(given: str | None, db: str | None, shown: str | None = None) -> str:
    """Where the store `db` (resolved from --db `given`, `configured_db`) was named, with
    its value (`shown` for it, as given when None): '--db X', "the configuration's db X",
    '$COSTSCHED_DB X', or 'the default store' (none of them set)."""
    from costsched.service.store_files import ENV_DB

    env = os.environ.get(ENV_DB)
    return (f"--db {shown or given}" if given is not None else
            f"the configuration's db {shown or db}" if db is not None else
            f"${ENV_DB} {shown or env}" if env else "the default store")


def _refuse(given: str | None, db: str | None, why: str, shown: str | None = None) -> NoReturn:
    """End the command with one line: where its store was named (`_source`), and `why`."""
    err_console.print(f"[red]error:[/red] {user_text(_source(given, db, shown))}: "
                      f"{user_text(why)}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def refuse_url(given: str | None, db: str | None) -> None:
    """A store URL (--db `given`, else `db` from `configured_db`, else $COSTSCHED_DB's)
    whose kind or driver costsched cannot open, refused in one line naming where it was
    given, with the URL meant where it is a PostgreSQL one written otherwise."""
    from costsched.service.store_files import ENV_DB

    url = db if db is not None else os.environ.get(ENV_DB)
    if not url or "://" not in url or url.startswith("sqlite"):
        return
    from costsched.store.database import describe, url_refused

    refused = url_refused(url)
    if refused is not None:
        _refuse(given, db, refused, describe(url))


def _close_store(missing: Path) -> str:
    """'; did you mean '/x/team.sqlite'?' naming the files beside the store file `missing`
    (of its extension, if it has one) whose names are close to its ('' when none is)."""
    from costsched.taskfile import close_files

    path = missing.expanduser().resolve()
    return close_files(path, (path.suffix.lower(),) if path.suffix else ())


def _server_without_store(given: str | None, db: str | None) -> str | None:
    """The URL (its password masked) of the database server `db` names (None: the
    default store) when it holds no costsched store yet; None for a SQLite store, and for
    a server that holds one. A server down or silent ends the command in one line naming
    where its URL was given, exit code 75 (`fail`): an option's callback runs outside
    `friendly_errors`."""
    from costsched.service.store_files import ENV_DB

    url = db if db is not None else os.environ.get(ENV_DB)
    if not url or "://" not in url or url.startswith("sqlite"):
        return None
    from costsched.config import effective
    from costsched.store.database import describe
    from costsched.store.presence import holds_store

    # A server that never answers is waited on as the store's opening waits, no longer.
    try:
        held = holds_store(url, effective().store)
    except InvalidInput as exc:
        store = f"store {describe(url)}: "
        text = str(exc)
        if text.startswith(store):  # where the URL came from, as the other lines say
            exc.args = (f"{_source(given, db, describe(url))}: {text[len(store):]}",)
        fail(exc)
    return describe(url) if held is False else None


NO_STORE = "none:"  # the default store, not made yet: nothing launched on this machine


def _reads_store_or_nothing(db: str | None) -> str | None:
    """A look at jobs on a machine where nothing was launched yet (no --db, no
    $COSTSCHED_DB, no default store) finds no jobs (NO_STORE); a store named that does not
    exist is a typo, named in one line (`reads_store`)."""
    from costsched.service.store_files import ENV_DB, missing_store

    configured = configured_db(db)
    missing = missing_store(None)
    if configured is None and not os.environ.get(ENV_DB) and missing is not None:
        _NOT_MADE["where"] = str(missing.resolve())
        return NO_STORE
    return _read_store(db, configured)


_NOT_MADE: dict[str, str] = {}  # the default store `say_no_store` names, once input is read


def no_store_yet(db: str | None) -> str | None:
    """What a command that only lists says where its store `db` is the default store not
    made yet (`NO_STORE`, `IN_MEMORY` for `EmptyDbOption`): which store it read, for a
    --db or $COSTSCHED_DB forgotten to be seen; None for any other store. Said once."""
    where = _NOT_MADE.pop("where", None) if db in (NO_STORE, IN_MEMORY) else None
    if where is None:
        return None
    return (f"the default store {where} does not exist yet, and no --db, $COSTSCHED_DB or "
            "configured db names another: nothing was launched or stored with it")


def say_no_store(db: str | None) -> None:
    """`no_store_yet` on stderr, as a note: called once the command's input is read, so
    that input it refuses gets its one line and nothing more."""
    said = no_store_yet(db)
    if said is not None:
        err_console.print(f"note: {user_text(said)}", highlight=False, soft_wrap=True)


def _reads_store_or_empty(db: str | None) -> str | None:
    """A command that lists what launches, imports and the daemon store (risk signals,
    spend, moves, availability), on a machine where no store was made yet (no --db, no
    configured db, no $COSTSCHED_DB, no default store), reads an empty store in memory: it
    says what an empty store says (none stored yet, and what stores them), exit code 0,
    and makes nothing. A store named that does not exist is a typo, named in one line."""
    found = _reads_store_or_nothing(db)
    return IN_MEMORY if found == NO_STORE else found


def _reads_store_or_list_prices(db: str | None) -> str | None:
    """A command that can answer from the bundled list prices reads the default store
    ($COSTSCHED_DB, else the user data directory's) when there is one, else an empty store
    in memory: nothing is created, and it says so once. A --db that does not exist is
    still a typo, named in one line."""
    from costsched.service.store_files import missing_store

    configured = configured_db(db)
    if configured is not None:
        return _read_store(db, configured)
    refuse_url(None, None)
    missing = missing_store(None)
    server = _server_without_store(None, None) if missing is None else None
    if missing is None and server is None:
        return db
    where = server if server is not None else str(missing.resolve()) if missing else ""
    _LIST_PRICES["where"] = where
    return IN_MEMORY


IN_MEMORY = "sqlite://"  # an empty store that lives as long as the command
_LIST_PRICES: dict[str, str] = {}  # the store `say_list_prices` names, once the input is read


def say_list_prices(db: str | None) -> None:
    """Say once, on stderr, that the command answers from the bundled list prices where
    there is no store yet (`ListPricesDbOption`): called once its input is read, so that
    input it refuses gets its one line and nothing more."""
    where = _LIST_PRICES.pop("where", None) if db == IN_MEMORY else None
    if where is not None:
        err_console.print(f"no store at {user_text(where)} yet: bundled list prices only "
                          f"({user_text(collect_hint())} or `costsched prices import FILE` "
                          "makes one)", highlight=False, soft_wrap=True)


def announce_new_store(db: str | None) -> None:
    """Say, once on stderr, that the store `db` is made now, when it does not exist yet:
    what a command that writes calls as it opens its store (`WritesDbOption`), once its
    input is read, so that a refusal says nothing of a store it never made."""
    from costsched.service.store_files import missing_store

    missing = missing_store(db)
    # Said only where the file can be made; otherwise opening it says why not.
    if missing is not None and _can_create(missing):
        err_console.print(f"creating the store {user_text(missing.resolve())}",
                          highlight=False, soft_wrap=True)


def _can_create(path: Path) -> bool:
    """Whether the store's file can be made: its folder can be made, as opening the store
    makes it (tried, then removed again: a folder that only looks writable, such as /proc,
    refuses), and written in."""
    folder = path.resolve().parent
    made = [p for p in (folder, *folder.parents) if not p.exists()]  # deepest first
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.access(folder, os.W_OK | os.X_OK)
    except OSError:
        return False
    finally:  # the store makes them as it opens: none is left behind by a refusal first
        for p in made:
            with contextlib.suppress(OSError):
                p.rmdir()


_DB_HELP = ("SQLAlchemy URL or SQLite file path (default: $COSTSCHED_DB, else the "
            "configuration's db, else a file in the user data directory).")
# Commands that only read the store take DbOption (ListPricesDbOption where the bundled
# list prices can answer without one); those that store prices, jobs or facts take
# WritesDbOption with NewStoreOption, resolved in the command (`writes_store`): the default
# store is made if missing, a --db only with --new-store.
DbOption = Annotated[str | None, typer.Option("--db", help=_DB_HELP + " It must exist.",
                                              callback=reads_store, show_default=False)]
# `status`: no store yet is no jobs yet.
JobsDbOption = Annotated[str | None, typer.Option("--db", help=_DB_HELP + " It must exist.",
                                                  callback=_reads_store_or_nothing,
                                                  show_default=False)]
# What only lists stored records (`risk show`, `report`, `migrate`, `prices availability`):
# no store yet is none of them yet.
EmptyDbOption = Annotated[str | None, typer.Option(
    "--db", help=_DB_HELP + " It must exist; with no --db, while the default store is not "
    "made yet, there is nothing stored to show.", callback=_reads_store_or_empty,
    show_default=False)]
WritesDbOption = Annotated[str | None, typer.Option(
    "--db", help=_DB_HELP + " That default is made if missing; a --db that does not exist yet "
    "is refused as a typo unless --new-store is given.", show_default=False)]
NewStoreOption = Annotated[bool, typer.Option(
    "--new-store", help="Make the store --db names when it does not exist yet; without it, "
    "such a --db is refused as a typo.")]
ListPricesDbOption = Annotated[str | None, typer.Option(
    "--db", help=_DB_HELP + " It must exist; with no --db, while the store $COSTSCHED_DB "
    "names or the default one is not made yet, the bundled list prices are used.",
    callback=_reads_store_or_list_prices, show_default=False)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON only.")]
# What the commands about jobs share (`status`, `logs` and the rest).
JobArgument = Annotated[str, typer.Argument(help="Job id or name.", show_default=False)]

NO_JOBS = "No jobs. `costsched launch JOB.yaml` starts one."
NEVER_RUN = ("Scheduled optimizer: never run (`costsched daemon`, or `costsched daemon --once` "
             "from cron).")

F = TypeVar("F", bound=Callable[..., Any])

# Control characters (C0, DEL, C1) and the bidirectional overrides that can reorder
# what a terminal shows.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object) -> str:
    """The text of a value with its control characters shown as escapes ('\\x1b')."""
    return _UNPRINTABLE.sub(_visible, str(value))


def user_text(value: object) -> str:
    """Text from a user (names, paths, values, messages that quote them) made safe to print
    through rich markup: markup is escaped and control characters are shown as escapes,
    so it appears literally and can neither restyle nor drive the terminal."""
    return escape(printable(value))


EXIT_FAILED = 1  # what was asked could not be done (a job that could not be launched)
EXIT_BAD_INPUT = 2
EXIT_TRY_AGAIN = 75  # EX_TEMPFAIL: the store is down or busy now; the same command may work


def friendly_errors(fn: F) -> F:
    """Bad input ends the command with its one-line message and exit code 2, a store that
    cannot be reached now with exit code 75; a cloud's failure (`CloudError`) with its one
    line and exit code 75 when it may pass (the network, throttling), else 1; a cloud whose
    SDK is not installed or whose account is not set up here, with its line (what to
    install, what to do) and exit code 1; no traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InvalidInput as exc:
            fail(exc)
        except (RuntimeError, LookupError) as exc:
            # Only the clouds' modules raise these: where none was loaded, none was met.
            clouds = sys.modules.get("costsched.clouds.base")
            if clouds is not None and isinstance(exc, (clouds.SdkMissing, clouds.NotSetUp)):
                say_error(str(exc))
                raise typer.Exit(EXIT_FAILED) from None
            # Only the launchers raise CloudError: where they were never loaded, it is not
            # loaded to tell.
            port = sys.modules.get("costsched.migration.launcher")
            if port is None or not isinstance(exc, port.CloudError):
                raise
            say_error(str(exc))
            raise typer.Exit(EXIT_TRY_AGAIN if exc.transient else EXIT_FAILED) from None

    return wrapper  # type: ignore[return-value]


def say_error(line: str) -> None:
    """One error line on stderr (redacted, printed as it is)."""
    err_console.print(f"[red]error:[/red] {user_text(redact(line))}", highlight=False,
                      soft_wrap=True)


def say_warning(line: str) -> None:
    """One warning line on stderr, `warning: ` first (redacted, printed as it is), beside
    --json too: every warning a command prints, its own and its launchers' logged ones
    (`costsched.cli.logged_warnings`)."""
    err_console.print(f"warning: {user_text(redact(line))}", highlight=False, soft_wrap=True)


def fail(exc: InvalidInput) -> NoReturn:
    """End the command with the error's one line: exit code 75 for a store that cannot be
    reached now or another costsched acting on what was asked (`TryAgain`), else 2."""
    say_error(str(exc))
    # Only the database layer raises StoreUnavailable: where it was never loaded (a bad
    # job file refused first), it is not loaded to tell.
    database = sys.modules.get("costsched.store.database")
    unavailable = database is not None and isinstance(exc, database.StoreUnavailable)
    code = EXIT_TRY_AGAIN if unavailable or isinstance(exc, TryAgain) else EXIT_BAD_INPUT
    raise typer.Exit(code) from None


def parse_time(value: str | None, name: str = "--at") -> datetime:
    """An aware UTC time from ISO 8601 text ('2020-03-01T00:00Z', '2020-03-01'), or now."""
    from costsched.service.values import as_time

    return as_time(value, name)


def future_note(value: str | None, name: str = "--at") -> None:
    """`future_line` as a note on stderr."""
    line = future_line(value, name)
    if line:
        err_console.print(f"note: {line}", highlight=False, soft_wrap=True, markup=False)


def future_line(value: str | None, name: str = "--at") -> str:
    """When `value` (an --at) is after now, the note that says so ('' otherwise): prices
    are facts of their time, so a time to come is priced at the newest known (as a plan
    made now would be)."""
    if value in (None, "now"):
        return ""
    from datetime import timedelta, timezone

    when = parse_time(value, name)
    if when > datetime.now(timezone.utc) + timedelta(minutes=10):
        return (f"{name} {when:%Y-%m-%d %H:%M} UTC is after now: no price is known for a "
                "time to come, so these are the newest prices known now")
    return ""


@contextmanager
def options(**flags: str) -> Iterator[None]:
    """Name the option a value came from in the service's errors: with days="--days",
    "days 0: expected ..." reads "--days 0: expected ..."."""
    try:
        yield
    except InvalidInput as exc:
        text = str(exc)
        for name, flag in flags.items():
            if text.startswith(name) and text[len(name):len(name) + 1] in (" ", ":"):
                raise InvalidInput(flag + text[len(name):]) from None
        raise


def at_least(option: str, value: float | None, low: float = 0.0, *,
             above: bool = False) -> None:
    """One line refusing an option's number that is not finite, or below `low` (or not
    above it, with `above`): '--wait -3: expected a finite number >= 0' (the number as
    typed, not as a float prints it)."""
    if value is None:
        return
    fine = math.isfinite(value) and (value > low if above else value >= low)
    if not fine:
        raise InvalidInput(f"{option} {number_text(value)}: expected a finite number "
                           f"{'>' if above else '>='} {low:g}")


class OptionValue(typer.BadParameter):
    """An option's value refused by costsched's own parser: its message is the value and
    what is accepted, said after the option's name ('--budget '5USD': expected ...')."""


def dollars(value: str | float) -> float:
    """An amount of USD as a job file takes it, for a --budget: 5, 12.50, '$5', '1,200',
    '5 USD' (`amounts.parse_usd`)."""
    from costsched.amounts import parse_usd

    try:
        return parse_usd(value)
    except ValueError as exc:
        raise OptionValue(str(exc)) from None


class Typed(float):
    """A number as the user typed it: it computes as a float (whatever it makes is a plain
    float), and prints as it was typed ('-3', not '-3.0'; '1e3', not '1000.0'), so that a
    refusal or a summary that names it echoes what the user wrote."""

    text: str

    def __new__(cls, value: float, text: str) -> Typed:
        number = super().__new__(cls, value)
        number.text = text
        return number

    def __getnewargs__(self) -> tuple[float, str]:  # copied and pickled with its text
        return float(self), self.text

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def typed_number(value: str | float) -> float:
    """An option's number as typed (`Typed`), for typer's `parser=`; a default (a float)
    prints as the shortest text that reads back as it ('0.05', '4')."""
    if isinstance(value, float) and not isinstance(value, Typed):
        text = repr(value)
        return Typed(value, text.removesuffix(".0") if "e" not in text else text)
    if isinstance(value, (int, float)):
        return Typed(float(value), str(value))
    text = str(value).strip()
    try:
        return Typed(float(text), text)
    except ValueError:
        raise OptionValue(f"{value!r}: expected a number") from None


# A number option echoed as the user typed it (Typed) in refusals and summaries.
AS_TYPED = {"parser": typed_number, "metavar": "FLOAT"}


def number_text(value: float) -> str:
    """A number as its option was typed (`Typed`), else in its shortest form ('-3')."""
    return str(value) if isinstance(value, Typed) else f"{value:g}"


def split_csv(values: list[str] | None) -> list[str]:
    """Repeated and comma-separated option values as one flat list."""
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


INDENT_UP_TO = 1_000_000  # characters of JSON


def print_json(data: Any) -> None:
    # Indented for reading; a large document (a long price history, a report) compact
    # instead, as only the compact form has Python's fast C encoder.
    text = json.dumps(data, default=_json_default, separators=(",", ":"))
    if len(text) < INDENT_UP_TO:
        text = json.dumps(data, indent=2, default=_json_default)
    sys.stdout.write(text + "\n")


def stream_json(doc: dict[str, Any], indent: bool = True) -> None:
    """One JSON document written piece by piece: a value that is an iterator (a
    generator) is written item by item, and so are the members of a dict holding one, so
    that a large list is never one string in memory. `indent`: two spaces per level, as
    print_json; else each item on a line of its own, compact."""
    dumps = partial(json.dumps, default=_json_default, indent=2 if indent else None,
                    separators=None if indent else (",", ":"))
    _stream(sys.stdout.write, dumps, doc, "\n")
    sys.stdout.write("\n")


def _stream(write: Callable[[str], Any], dumps: Callable[[Any], str], value: Any,
            newline: str) -> None:
    """`value` at the indentation `newline` ends with."""
    inner = newline + "  "
    if _holds_iterator(value):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        write("{" if isinstance(value, dict) else "[")
        empty = True
        for key, item in items:
            write(("," if not empty else "") + inner)
            if isinstance(value, dict):
                write(json.dumps(key) + ": ")
            _stream(write, dumps, item, inner)
            empty = False
        write(("" if empty else newline) + ("}" if isinstance(value, dict) else "]"))
        return
    write(dumps(value).replace("\n", newline))


def _holds_iterator(value: Any) -> bool:
    return isinstance(value, Iterator) or (
        isinstance(value, dict) and any(_holds_iterator(v) for v in value.values()))


def frame_record_stream(frame: pd.DataFrame, chunk: int = 10_000) -> Iterator[dict]:
    """frame_records of a large frame, a chunk of rows at a time."""
    for start in range(0, len(frame), chunk):
        yield from frame_records(frame.iloc[start:start + chunk])


WideOption = Annotated[bool, typer.Option(
    "--wide", help="Every column, however wide the table (by default the columns that decide "
    "come first and the others are left out where the terminal is too narrow).")]

# Text longer than this in one word is folded rather than widening its column.
FOLD_AFTER = 24
MIN_FOLDED = 8  # a text column's words fold to no narrower than this
# Detail columns are left out until the other columns' text fits on one line up to this
# many characters (an offering's name, a region); longer text wraps.
UNWRAPPED = 40


def cell(value: str | Text) -> Text:
    """A table cell shown literally: its control characters as escapes, a Text's style kept
    (the one escaping of user text in tables)."""
    if isinstance(value, Text):
        if not _UNPRINTABLE.search(value.plain):
            return value
        return Text(printable(value.plain), style=value.style, justify=value.justify)
    return Text(printable(value))


def report_cells(frame: pd.DataFrame, columns: Sequence[str],
                 places: dict[str, int] | None = None
                 ) -> tuple[list[str], list[list[str | Text]]]:
    """The headings and rows of `frame`'s `columns` as the reports show them (each value
    formatted by its column, `report.html.format_cell`); `places`: the table's precision
    when the caller knows it (`report.html.report_places`)."""
    from costsched.report.html import added_up, format_cell, heading, table_places

    shown = frame[list(columns)]
    places = places or table_places(shown)  # one precision: the rows add up
    shown = added_up(shown, places)
    rows: list[list[str | Text]] = [
        [Text(format_cell(c, v, places)) for c, v in zip(columns, r, strict=True)]
        for r in shown.itertuples(index=False)]
    return [heading(c) for c in columns], rows


def is_figure(column: str) -> bool:
    """Columns of numbers (dollars, hours, rates, counts): never wrapped or cut."""
    return (column.startswith("$") or column.endswith(("$", "$/h", "%", "h", "/s", "hours",
                                                        "preemptions", "ratio"))
            or column in {"GPUs", "hours", "#", "id", "cost vs on-demand", "progress",
                          "vs OD V100", "speed", "lost steps"})


def command_options() -> set[str]:
    """The options of the command being run ('--wide', '--json', ...); none outside one."""
    ctx = get_current_context(silent=True)
    if ctx is None:
        return set()
    return {o for p in ctx.command.params for o in (*p.opts, *p.secondary_opts)}


def asked_wide() -> bool:
    """Whether the command being run was given --wide."""
    ctx = get_current_context(silent=True)
    return bool(ctx is not None and ctx.params.get("wide"))


def left_out_caption(left_out: Sequence[str]) -> str:
    """'not shown: a, b (--wide or --json shows them)', naming only the options the
    command being run has."""
    offered = [o for o in ("--wide", "--json") if o in command_options()]
    them = "it" if len(left_out) == 1 else "them"
    how = (f"{' or '.join(offered)} shows {them}" if offered
           else f"a wider terminal shows {them}")
    return f"not shown: {', '.join(left_out)} ({how})"


def table(title: str, columns: list[str], rows: list[list[str | Text]], *,
          detail: Sequence[str] = (), wide: bool | None = None) -> Table:
    """A table that fits the console: figures are never cut, text wraps, and where the
    columns still do not fit, the `detail` columns are left out, in the order given, until
    they do (unless `wide`, by default the command's --wide); the caption names them and
    the command's option that shows them. String cells (and the title) are user text,
    shown literally; a styled cell is passed as a rich Text."""
    wide = asked_wide() if wide is None else wide
    cells = [[cell(c) for c in row] for row in rows]
    shown = list(range(len(columns)))
    left_out: list[str] = []
    for name in [] if wide else detail:
        if _width_needed([columns[i] for i in shown], [[r[i] for i in shown] for r in cells]) \
                <= console.width:
            break
        shown.remove(columns.index(name))
        left_out.append(name)
    caption = left_out_caption(left_out) if left_out else None
    out = Table(title=Text(printable(title), style="table.title"), header_style="bold",
                caption=caption)
    if wide:  # as wide as the columns are: the terminal wraps or scrolls it
        out.width = _width_needed(columns, cells)
    least = {i: _column_width(columns[i], [r[i] for r in cells]) for i in shown}
    if not wide:  # long words of text columns fold where even the least does not fit
        text = [i for i in shown if not is_figure(columns[i])]
        cut: set[int] = set()
        while text and 1 + sum(w + 3 for w in least.values()) > console.width:
            widest = max(text, key=least.__getitem__)
            if least[widest] <= MIN_FOLDED:
                break
            least[widest] -= 1
            cut.add(widest)
        # rich shares the width evenly among the widest columns: none is left wider
        for i in text if cut else ():
            least[i] = min(least[i], *(least[j] for j in cut))
    for i in shown:
        figure = is_figure(columns[i])
        out.add_column(columns[i], justify="right" if figure else "left", no_wrap=figure,
                       overflow="fold", min_width=least[i])
    for row in cells:
        out.add_row(*(row[i] for i in shown))
    return out


def _width_needed(columns: list[str], rows: list[list[Text]]) -> int:
    """Columns wide enough for every figure whole and every text column's longest word (up
    to FOLD_AFTER), with rich's padding and borders."""
    return 1 + sum(_column_width(name, [row[i] for row in rows], whole=True) + 3
                   for i, name in enumerate(columns))


def _column_width(name: str, cells: list[Text], whole: bool = False) -> int:
    """A figure's column: its widest cell; a text column: its longest word, up to
    FOLD_AFTER (`whole`: its widest cell, up to UNWRAPPED), headers included."""
    texts = [Text(name), *cells]
    if is_figure(name):
        return max(t.cell_len for t in texts)
    if whole:
        return max(min(UNWRAPPED, t.cell_len) for t in texts)
    return max(min(FOLD_AFTER, max((len(w) for w in t.plain.split()), default=0))
               for t in texts)


class _Quiet:
    def update(self, text: str) -> None:
        """Nothing is shown."""


@contextmanager
def live_status(text: str, shown: bool = True) -> Iterator[Any]:
    """A spinner and a line on stderr while something is waited for (`.update(text)`
    changes the line); nothing when not `shown` (--json)."""
    if not shown:
        yield _Quiet()
        return
    with err_console.status(err_console.render_str(text)) as status:
        yield _Shown(status)


class _Shown:
    """A spinner's line, its text read as the console reads any (markup, no emoji codes)."""

    def __init__(self, status: Any) -> None:
        self._status = status

    def update(self, text: str) -> None:
        self._status.update(err_console.render_str(text))
