"""costsched's own COSTSCHED_* variables, and the line that says a COSTSCHED_* variable is
none of them (a misspelt override would else be ignored without a word)."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from costsched.config.sections import ENV_CONFIG, ENV_PREFIX, KEYS, SECTIONS
from costsched.vocabulary import closest

# Variables of costsched's that are no configuration key: read by the commands, by its
# launchers and their agents on the instances (and given to the jobs), by the notebooks,
# the benchmarks and the tests. A new one is added here (a test reads the sources for them).
OWN = frozenset({
    ENV_CONFIG, "COSTSCHED_AZURE_PRICES_URL", "COSTSCHED_SPOT_ADVISOR_URL",
    "COSTSCHED_INSTANCES", "COSTSCHED_DISCOVERED_TYPES", "COSTSCHED_THROUGHPUTS",
    "COSTSCHED_DASHBOARD_TOKEN", "COSTSCHED_EVENT",
    # on an instance, and given to the job
    "COSTSCHED_JOB_ID", "COSTSCHED_PROGRESS_FILE", "COSTSCHED_CHECKPOINT_DIR",
    "COSTSCHED_CHECKPOINT_MINUTES", "COSTSCHED_GANG_ROUND", "COSTSCHED_NODE_RANK",
    "COSTSCHED_NODE_IPS", "COSTSCHED_NUM_NODES", "COSTSCHED_NUM_GPUS_PER_NODE",
    "COSTSCHED_AGENT_ONLY", "COSTSCHED_AGENT_POLL", "COSTSCHED_BOOT", "COSTSCHED_BOOT_ROOT",
    "COSTSCHED_CHECKPOINT_SETTLE_SECONDS",  # the job's envs, read by its agent
    "COSTSCHED_COMMIT",  # not a variable: the file a job touches to commit a checkpoint
    # the notebooks, the benchmarks and the tests
    "COSTSCHED_NB_DB", "COSTSCHED_NB_START", "COSTSCHED_NB_END", "COSTSCHED_NB_MODELS",
    "COSTSCHED_BENCH_CODE", "COSTSCHED_TEST_PG_URL", "COSTSCHED_REQUIRE_PG",
    "COSTSCHED_REQUIRE_CHROMIUM", "COSTSCHED_DASHBOARD_SHOTS", "COSTSCHED_SHARED_DATA",
})

_SAID: set[str] = set()  # the names said in this process: each once


def env_name(key: str) -> str:
    """The variable that overrides the configuration's dotted `key`."""
    return ENV_PREFIX + key.replace(".", "_").upper()


def settings() -> list[str]:
    """The variables of every configuration key."""
    return [env_name(key) for key in KEYS]


def unknown_line(name: str) -> str:
    """'' for a COSTSCHED_* variable that is a setting or one of costsched's own (or no
    COSTSCHED_* variable, or one of a section, whose unknown key `load` refuses); else the
    line that says it is ignored, with the close names: a setting or variable that reads
    alike, else the settings of the section it reads like."""
    sections = tuple(f"{ENV_PREFIX}{s.upper()}_" for s in SECTIONS)
    if not name.startswith(ENV_PREFIX) or name in OWN or name in settings() \
            or name.startswith(sections):  # (a section's unknown key is refused: config)
        return ""
    rest = name.removeprefix(ENV_PREFIX)
    names = sorted({*settings(), *OWN})
    close = closest(rest, [n.removeprefix(ENV_PREFIX) for n in names])
    hint = ("; did you mean " + " or ".join(repr(ENV_PREFIX + c) for c in close) + "?"
            if close else "")
    if not close:
        section = closest(rest.split("_", 1)[0], [s.upper() for s in SECTIONS])
        if section:
            keys = sorted(n for n in settings() if n.startswith(f"{ENV_PREFIX}{section[0]}_"))
            hint = f"; did you mean a setting of [{section[0].lower()}]: {', '.join(keys)}?"
    return f"warning: env {name}: not a costsched setting, ignored{hint}"


def say_unknown(env: Mapping[str, str]) -> None:
    """Each COSTSCHED_* variable of `env` that is none of costsched's, once in this process,
    on stderr (`unknown_line`)."""
    for name in sorted(env):
        if name.startswith(ENV_PREFIX) and name not in _SAID:
            line = unknown_line(name)
            if line:
                _SAID.add(name)
                print(line, file=sys.stderr)
