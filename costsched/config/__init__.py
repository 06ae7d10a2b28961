"""The configuration: one TOML file, then COSTSCHED_<SECTION>_<KEY> environment overrides.

The file is the one given (the CLI's --config), else $COSTSCHED_CONFIG, else config.toml in
the platform's user config directory (missing there = every default). Each value remembers
where it came from (`Loaded.sources`), for `costsched config show`. A bad value is one
`InvalidInput` line naming the file (or variable), the dotted key and what is accepted.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from costsched import file_limits
from costsched.config.env_names import check_env_names, env_name
from costsched.config.fields import (  # noqa: F401 - FRACTION...: the configuration's names
    FRACTION,
    EntryError,
    Section,
    duration_text,
    fraction_problem,
)
from costsched.config.sections import (  # noqa: F401 - the configuration's names
    DURATION_UNITS,
    ENV_CONFIG,
    ENV_PREFIX,
    KEYS,
    LAUNCHERS,
    PASS_ENV,
    SECTIONS,
    AzureConfig,
    BillsConfig,
    BudgetsConfig,
    CallsConfig,
    CollectConfig,
    Config,
    DaemonConfig,
    FilesConfig,
    LaunchConfig,
    MigrationConfig,
    NamedBudget,
    NotifyConfig,
    PolicyConfig,
    PricesConfig,
    ScheduleConfig,
    StoreConfig,
    ThroughputConfig,
    default_path,
    mask_url,
    never_passed,
    passed_env,
)
from costsched.model import InvalidInput
from costsched.redact import redact, redact_value, remember
from costsched.spec_errors import expected_words
from costsched.vocabulary import closest, did_you_mean

_env_name = env_name


# --- loading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    """A configuration, the file looked at (`read`: whether it existed) and the source of
    each dotted key: "default", "file /path/config.toml" or "env COSTSCHED_POLICY_MARGIN"."""

    config: Config
    sources: dict[str, str]
    path: Path
    read: bool

    def rows(self) -> list[tuple[str, Any, str]]:
        """(key, value, source) of every key, secrets masked (`costsched.redact`)."""
        return [(key, redact_value(self.value(key), key), self.sources[key]) for key in KEYS]

    def value(self, key: str) -> Any:
        node: Any = self.config
        for part in key.split("."):
            node = getattr(node, part)
        return node


def load(path: Path | None = None, env: Mapping[str, str] = os.environ) -> Loaded:
    """The configuration from `path`, else $COSTSCHED_CONFIG, else the default file (a missing
    default file means every default), with COSTSCHED_<SECTION>_<KEY> overrides applied."""
    explicit = path is not None or bool(env.get(ENV_CONFIG))
    file = Path(path if path is not None else env.get(ENV_CONFIG) or default_path()).expanduser()
    data: dict[str, Any] = {}
    sources = dict.fromkeys(KEYS, "default")
    read = file.is_file()
    if read:
        data = _read(file)
        origin = f"file {file}"
        _check_shape(data, origin)
        for key in _leaf_keys(data):
            sources[key] = origin
    elif explicit:  # in the words of the root's --config
        what = "a directory" if file.is_dir() else "no such file"
        raise InvalidInput(f"{file}: {what}: expected a TOML config file")
    check_env_names(env)  # a misspelt COSTSCHED_* name, of a section or a key
    for key in KEYS:
        name = _env_name(key)
        if name in env:
            _put(data, key, _from_env(key, env[name]))
            sources[key] = f"env {name}"
    try:
        config = _validated(data)
    except ValidationError as exc:
        raise _one_line(exc, data, sources) from None
    remember(config.secrets())
    return Loaded(config, sources, file, read)


class _HoldsSecrets(Exception):
    """A configuration that holds a secret: validated in each run, never kept."""

    def __init__(self, config: Config) -> None:
        super().__init__("a configuration with a secret")
        self.config = config


def _validated(data: dict[str, Any]) -> Config:
    """`data` validated; the configuration kept between runs (`costsched.kept`, by a digest
    of `data` and pydantic's version) unless it holds a secret: the next run with the same
    file and overrides reads it without building the sections' validators (three
    hundredths of a second of CPU in every command)."""
    import hashlib

    import pydantic

    from costsched.kept import kept

    def validate() -> Config:
        config = Config.model_validate(data)
        if config.secrets():
            raise _HoldsSecrets(config)  # before `kept` writes it
        return config

    digest = hashlib.blake2b(repr(data).encode(), digest_size=16).hexdigest()
    try:
        return kept("config", validate, also=(digest, pydantic.VERSION))
    except _HoldsSecrets as held:
        return held.config


def effective() -> Config:
    """The configuration in effect for this process ($COSTSCHED_CONFIG or the default file,
    with the environment's overrides). Read once while they are the same: a command asks
    for it a dozen times (a launch, 14), and each later call hands back the one read
    (frozen); a change of the file's content, of its name or of an override is read at
    the next call, and a bad configuration is refused at every call."""
    global _effective_last
    key, last = _effective_key(), _effective_last  # (one pair: threads may call it)
    if key is not None and last is not None and last[0] == key:
        remember(last[1].secrets())  # (as a load does: a test may forget them)
        return last[1]
    config = load().config
    _effective_last = None if key is None else (key, config)
    return config


# The configuration `effective` read last, with what it was read from (`_effective_key`).
_effective_last: tuple[tuple, Config] | None = None
_KEY_BYTES = 1 << 20  # a larger file is never kept (`load` refuses it: file_limits)


def _effective_key() -> tuple | None:
    """What `effective` reads the configuration from: the file's path and content (None:
    no file) and every COSTSCHED_* variable; None when the file cannot be read whole (a
    directory, unreadable, larger than a config file may be: `load` says what it is)."""
    env = os.environ
    file = Path(env.get(ENV_CONFIG) or default_path()).expanduser()
    content: bytes | None = None
    try:
        if file.stat().st_size > _KEY_BYTES:
            return None
        content = file.read_bytes()
    except FileNotFoundError:
        pass
    except OSError:
        return None
    return (str(file), content, tuple(sorted((k, v) for k, v in env.items()
                                             if k.startswith(ENV_PREFIX))))


def _read(file: Path) -> dict[str, Any]:
    file_limits.check(file, file_limits.CONFIG)
    try:
        text = file.read_bytes().decode("utf-8-sig")  # a byte order mark, as editors save
    except OSError as exc:
        raise InvalidInput(f"{file}: cannot read the config file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{file}: not UTF-8 text: expected a TOML file") from None
    # The TOML reader is loaded only when there is a file to read (most commands on most
    # machines have none): its import is a few milliseconds of every command's start.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = re.search(r"\(at line (\d+), column (\d+)\)", message)
        if at:
            reason = message[:at.start()].strip()
            raise InvalidInput(f"{file}: line {at[1]}, column {at[2]}: invalid TOML: "
                               f"{reason}") from None
        raise InvalidInput(f"{file}: invalid TOML: {message}") from None


def _check_shape(data: dict[str, Any], origin: str) -> None:
    """Unknown keys and sections that are not tables, named before the values are checked."""
    where = origin.removeprefix("file ")
    for name, value in data.items():
        if name == "db":
            continue
        if name not in SECTIONS and isinstance(value, dict):  # a table: '[migraton]'
            close = closest(name, list(SECTIONS))
            hint = ("; did you mean " + " or ".join(f"[{c}]" for c in close) + "?"
                    if close else "")
            raise InvalidInput(f"{where}: unknown section [{name}]: expected one of "
                               f"{', '.join(f'[{s}]' for s in SECTIONS)}{hint}")
        if name not in SECTIONS:
            home = [f"{s}.{name}" for s, cls in SECTIONS.items() if name in cls.model_fields]
            hint = (f"; it is a key of [{home[0].split('.')[0]}]: did you mean "
                    f"'{home[0]}'?" if len(home) == 1 else
                    did_you_mean(name, ["db", *SECTIONS]))
            raise InvalidInput(f"{where}: unknown key {name}: expected one of "
                               f"db, {', '.join(f'[{s}]' for s in SECTIONS)}{hint}")
        if not isinstance(value, dict):
            raise InvalidInput(f"{where}: {name} {value!r}: expected a table [{name}] with "
                               f"keys {', '.join(SECTIONS[name].model_fields)}")
        _check_keys(value, SECTIONS[name], name, where)
        if name == "budgets" and isinstance(value.get("named"), dict):
            for budget, settings in value["named"].items():
                if not isinstance(settings, dict):
                    raise InvalidInput(
                        f"{where}: budgets.named.{budget} {settings!r}: expected a table "
                        f"[budgets.named.{budget}] with keys "
                        f"{', '.join(NamedBudget.model_fields)}")
                _check_keys(settings, NamedBudget, f"budgets.named.{budget}", where)


def _check_keys(value: dict[str, Any], model: type[Section], name: str, where: str) -> None:
    """An unknown key of the table `name` (a section, or one named budget): the keys there
    are, and the close one."""
    allowed = model.model_fields
    for key in value:
        if key not in allowed:
            raise InvalidInput(f"{where}: unknown key {name}.{key}: expected one of "
                               f"{', '.join(f'{name}.{k}' for k in allowed)}"
                               + did_you_mean(key, allowed))


def _leaf_keys(data: dict[str, Any]) -> list[str]:
    keys = []
    for name, value in data.items():
        if isinstance(value, dict):
            keys.extend(f"{name}.{k}" for k in value)
        else:
            keys.append(name)
    return keys


def _put(data: dict[str, Any], key: str, value: Any) -> None:
    if "." not in key:
        data[key] = value
        return
    section, name = key.split(".", 1)
    data.setdefault(section, {})[name] = value


def _from_env(key: str, text: str) -> Any:
    """An environment string as the key's type: lists comma-separated (the notify command
    split like a shell would, without running one); "" = unset for optional keys."""
    if key == "notify.command":
        try:
            return shlex.split(text) if text.strip() else None
        except ValueError as exc:  # an unbalanced quote
            raise InvalidInput(f"env {_env_name(key)} {redact(text)!r}: {exc}: expected a "
                               "command line quoted like a shell's") from None
    if key in ("collect.clouds", "collect.regions", "launch.pass_env"):
        return [part.strip() for part in text.split(",") if part.strip()]
    if key == "launch.checkpoint_roots":  # CLOUD=ROOT,CLOUD=ROOT
        pairs = [part.partition("=") for part in text.split(",") if part.strip()]
        if any(not sep for _, sep, _ in pairs):
            raise InvalidInput(f"env {_env_name(key)} {text!r}: expected CLOUD=ROOT,...")
        return {cloud.strip(): root.strip() for cloud, _, root in pairs}
    if not text.strip() and key in _OPTIONAL:
        return None
    return text.strip()


_OPTIONAL = {"db", "collect.gcp_project", "migration.lost_work_minutes",
             "launch.checkpoint_root", "notify.webhook", "daemon.log_file",
             "azure.subscription_id", "azure.identity", "azure.storage_account",
             "azure.ssh_public_key", "azure.key_vault"}

_EXPECTED = {
    "float_parsing": "expected a number",
    "float_type": "expected a number",
    "finite_number": "expected a finite number",
    "string_type": "expected a string",
    "list_type": "expected a list of strings",
    "bool_parsing": "expected true or false",
    "bool_type": "expected true or false",
    "literal_error": None,  # from the field's choices
}


def _one_line(exc: ValidationError, data: dict[str, Any], sources: dict[str, str]
              ) -> InvalidInput:
    error = exc.errors()[0]
    # (section, field, type of a union, list index...): the key is the first two.
    loc = [str(part) for part in error["loc"]]
    key = ".".join(loc[:2]) if loc and loc[0] in SECTIONS else (loc[0] if loc else "")
    origin = sources.get(key, "default").removeprefix("file ")
    if loc[:2] == ["budgets", "named"] and len(loc) > 2:  # one budget's own key
        key = ".".join(loc[:4])
    value = error.get("input")
    value = redact_value(value, key)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    entry = ctx.get("error")
    if isinstance(entry, EntryError):  # one entry of a mapping: KEY.ENTRY and its value
        return InvalidInput(f"{origin}: {key}.{entry.entry} {entry.value!r}: {entry}")
    if kind == "value_error":
        expected = str(ctx.get("error", error["msg"]))
    elif kind in ("greater_than_equal", "greater_than"):
        sign = ">=" if kind == "greater_than_equal" else ">"
        expected = f"expected a number {sign} {ctx.get('ge', ctx.get('gt')):g}"
    elif kind in ("less_than_equal", "less_than"):
        sign = "<=" if kind == "less_than_equal" else "<"
        expected = f"expected a number {sign} {ctx.get('le', ctx.get('lt')):g}"
    elif kind == "literal_error":  # the field's choices, and the close one
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        expected = (f"expected one of {', '.join(choices)}"
                    + (did_you_mean(str(value), choices) if isinstance(value, str) else ""))
    else:
        expected = _EXPECTED.get(kind) or expected_words(error)
    return InvalidInput(f"{origin}: {key} {value!r}: {expected}")
