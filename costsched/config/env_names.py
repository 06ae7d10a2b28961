"""costsched's own COSTSCHED_* variables, and the line that refuses a COSTSCHED_* variable
that is none of them (a misspelt override would else be ignored without a word)."""

from __future__ import annotations

from collections.abc import Mapping

from costsched.config.sections import ENV_CONFIG, ENV_PREFIX, KEYS, SECTIONS
from costsched.model import InvalidInput
from costsched.vocabulary import closest

# Variables of costsched's that are no configuration key: read by the commands, by its
# launchers and their agents on the instances (and given to the jobs), by the notebooks,
# the benchmarks and the tests. A new one is added here (a test reads the sources for them).
OWN = frozenset({
    ENV_CONFIG, "COSTSCHED_AZURE_PRICES_URL", "COSTSCHED_SPOT_ADVISOR_URL",
    "COSTSCHED_INSTANCES", "COSTSCHED_DISCOVERED_TYPES", "COSTSCHED_THROUGHPUTS",
    "COSTSCHED_DASHBOARD_TOKEN", "COSTSCHED_EVENT",
    # on an instance, and given to the job
    "COSTSCHED_JOB_ID", "COSTSCHED_PROGRESS_FILE", "COSTSCHED_CHECKPOINT_DIR", "COSTSCHED_MOUNTS",
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

def env_name(key: str) -> str:
    """The variable that overrides the configuration's dotted `key`."""
    return ENV_PREFIX + key.replace(".", "_").upper()


def settings() -> list[str]:
    """The variables of every configuration key."""
    return [env_name(key) for key in KEYS]


def refusal(name: str) -> str:
    """'' for a variable that is no COSTSCHED_* one, a setting or one of costsched's own;
    else the line that refuses it (one rule, whether the section or the key is misspelt):
    with the close names, else the settings of the section it reads as, else how settings
    are named. A COSTSCHED_* variable is never ignored without a word."""
    if not name.startswith(ENV_PREFIX) or name in OWN or name in settings():
        return ""
    rest = name.removeprefix(ENV_PREFIX)
    names = sorted({*settings(), *OWN})
    close = closest(rest, [n.removeprefix(ENV_PREFIX) for n in names])
    if close:
        return (f"env {name}: not a costsched setting; did you mean "
                + " or ".join(repr(ENV_PREFIX + c) for c in close) + "?")
    section = next((s for s in SECTIONS if rest.startswith(f"{s.upper()}_")), None)
    if section is None:
        near = closest(rest.split("_", 1)[0], [s.upper() for s in SECTIONS])
        section = near[0].lower() if near else None
    if section:
        keys = [env_name(f"{section}.{k}") for k in SECTIONS[section].model_fields]
        return f"env {name}: not a setting of [{section}]: expected one of {', '.join(keys)}"
    return (f"env {name}: not a costsched setting: settings are COSTSCHED_<SECTION>_<KEY>, "
            "as `costsched config show` lists them (unset it)")


def check_env_names(env: Mapping[str, str]) -> None:
    """InvalidInput for the first COSTSCHED_* variable of `env` that is none of costsched's
    (`refusal`): checked by every command, as the configuration loads."""
    for name in sorted(env):
        line = refusal(name)
        if line:
            raise InvalidInput(line)
