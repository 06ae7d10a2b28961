"""Config files (TOML) and COSTSCHED_* overrides with random values: a config or a one-line
error."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from costsched import config
from tests.reliability.fuzz import FUZZ, one_line_error

toml_scalars = st.one_of(
    st.booleans(), st.integers(-10**18, 10**18), st.floats(), st.text(max_size=20),
    st.sampled_from(["", "aws", "us-east-1", "0 3 * * *", "* * *", "local", "nope",
                     "postgresql://u:secret@h/db", "[bold]x", "\x1b[2J", "-1", "1e999"]),
)
toml_values = st.one_of(toml_scalars, st.lists(toml_scalars, max_size=3))
known_keys = st.sampled_from([k for k in config.KEYS if "." in k])


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return _string(value)


def _string(text: object) -> str:
    """A TOML basic string: JSON's escapes are TOML's (DEL is escaped in TOML only)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _document(top: dict, sections: dict[str, dict[str, object]]) -> str:
    lines = [f"{_string(k)} = {_toml(v)}" for k, v in top.items()]
    for section, keys in sections.items():
        lines.append(f"[{_string(section)}]")
        lines += [f"{_string(k)} = {_toml(v)}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


def _sections(pairs: dict[str, object]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for key, value in pairs.items():
        section, name = key.split(".", 1)
        out.setdefault(section, {})[name] = value
    return out


def _load(path: Path, text: str, env: dict[str, str]) -> None:
    path.write_text(text)
    loaded = config.load(path, env=env)
    assert {key for key, _, _ in loaded.rows()} == set(config.KEYS)


@FUZZ
@given(pairs=st.dictionaries(known_keys, toml_values, max_size=5),
       db=st.one_of(st.none(), toml_scalars))
def test_fuzzed_known_keys(tmp_path: Path, pairs: dict, db: object) -> None:
    top = {} if db is None else {"db": db}
    one_line_error(lambda: _load(tmp_path / "c.toml", _document(top, _sections(pairs)), {}))


@FUZZ
@given(sections=st.dictionaries(st.text(max_size=8), st.dictionaries(
    st.text(max_size=8), toml_values, max_size=3), max_size=3))
def test_fuzzed_unknown_keys(tmp_path: Path, sections: dict) -> None:
    error = one_line_error(lambda: _load(tmp_path / "c.toml", _document({}, sections), {}))
    known = {k.split(".")[0] for k in config.KEYS}
    if any(s not in known for s in sections):
        assert error is not None and "unknown " in str(error)  # key or section


@FUZZ
@given(env=st.dictionaries(known_keys.map(lambda k: "COSTSCHED_" + k.replace(".", "_").upper()),
                           st.text(max_size=20), max_size=4))
def test_fuzzed_environment_overrides(tmp_path: Path, env: dict[str, str]) -> None:
    one_line_error(lambda: _load(tmp_path / "c.toml", "", env))


@FUZZ
@given(text=st.text(max_size=60))
def test_arbitrary_text_is_a_config_or_one_line(tmp_path: Path, text: str) -> None:
    one_line_error(lambda: _load(tmp_path / "c.toml", text, {}))
