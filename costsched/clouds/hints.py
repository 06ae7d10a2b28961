"""The commands a hint names that read the clouds (`costsched collect`, `costsched quotas
--refresh`, `costsched catalog refresh`), each after the `pip install` of the extras their
clouds' SDKs need where this machine lacks them, so that every hint works as printed. The
one place that writes them: a command's own lines (`collect`'s "nothing collected") too.

A hint about a price, quota or offering names the clouds it is about (`costsched collect
--cloud gcp`), never the clouds whose SDKs happen to be here: where those clouds' SDKs are
missing, their install comes first. A hint about no cloud in particular names none (the
command reads them all), after the install of every extra this machine lacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from costsched.clouds.base import installed

CLOUD_NAMES = ("aws", "gcp", "azure")  # (costsched.clouds.NAMES, without importing them)
# What each cloud's price collector (and catalog refresh) imports before it reads anything:
# without one of these it cannot run at all. The extra of each cloud is its name.
PRICES_WITH: Mapping[str, tuple[str, ...]] = {
    "aws": ("boto3",),
    "gcp": ("google.auth", "google.cloud.billing_v1", "google.cloud.compute_v1"),
    "azure": ("requests",)}
# What each cloud's quota reader imports first.
QUOTAS_WITH: Mapping[str, tuple[str, ...]] = {
    "aws": ("boto3",),
    "gcp": ("google.auth", "google.cloud.compute_v1"),
    "azure": ("azure.identity", "azure.mgmt.compute")}


def lacking(clouds: Sequence[str], needs: Mapping[str, tuple[str, ...]] = PRICES_WITH
            ) -> list[str]:
    """The clouds of `clouds` whose SDK (what `needs` names) is not installed here."""
    return [c for c in clouds if not all(installed(m) for m in needs.get(c, ()))]


def command(words: str, clouds: Sequence[str] = (), options: str = "",
            needs: Mapping[str, tuple[str, ...]] = PRICES_WITH) -> str:
    """The command `costsched WORDS` for `clouds` (the clouds the hint is about; none: all
    of them) with `options`, after the `pip install` of the extras it lacks here ("pip
    install 'costsched[aws]'`, then `costsched collect --cloud aws": the backticks around
    the whole are the caller's)."""
    named = list(dict.fromkeys(clouds))  # (each cloud once, in the caller's order)
    extras = sorted(lacking(named or CLOUD_NAMES, needs))
    first = f"pip install 'costsched[{','.join(extras)}]'`, then `" if extras else ""
    return (f"{first}costsched {words}" + "".join(f" --cloud {c}" for c in named)
            + options)


def collect_command(clouds: Sequence[str] = (), regions: Sequence[str] = (),
                    gpus: Sequence[str] = (), booked: bool = False,
                    installed: bool = False) -> str:
    """The collect command of `clouds` (none: all), `regions` and `gpus` (with `booked`:
    the booked capacity too), after the install its clouds need here (`command`; none with
    `installed`: a line that named it already, before another command)."""
    return command("collect", clouds, "".join(f" --region {r}" for r in regions)
                   + " --booked" * booked + "".join(f" --gpu {g}" for g in gpus),
                   {} if installed else PRICES_WITH)


def collect_hint(clouds: Sequence[str] = (), regions: Sequence[str] = (),
                 gpus: Sequence[str] = ()) -> str:
    """'`costsched collect`', or "`pip install 'costsched[aws,azure,gcp]'`, then `costsched
    collect`" where the SDKs are missing: the hint in its backticks."""
    return f"`{collect_command(clouds, regions, gpus)}`"


def quotas_hint(clouds: Sequence[str] = ()) -> str:
    """'`costsched quotas --refresh`', after the install its clouds need here."""
    return f"`{command('quotas --refresh', clouds, needs=QUOTAS_WITH)}`"


def quotas_read_hint(clouds: Sequence[str] = ()) -> str:
    """What reads the quotas: '`costsched collect` or `costsched quotas --refresh`', or
    where an install is needed first, the refresh alone after it (the install said once)."""
    if lacking(clouds or CLOUD_NAMES, QUOTAS_WITH):
        return quotas_hint(clouds)
    return f"{collect_hint(clouds)} or {quotas_hint(clouds)}"


def catalog_refresh_hint(clouds: Sequence[str] = ()) -> str:
    """'`costsched catalog refresh`', after the install its clouds need here (the
    catalog's refresh reads the clouds as the price collectors do)."""
    return f"`{command('catalog refresh', clouds)}`"
